/**
 * Mermaid state diagrams generated from xstate machine definitions, so specs/state-machines.md
 * shows the machines the code runs: `npx tsx scripts/machine-diagrams.ts --write` rewrites the
 * generated blocks, and test/unit/machines/diagrams.spec.ts fails when they are out of date.
 */
import type { AnyStateMachine, AnyStateNode } from 'xstate'

interface TransitionDef {
  target?: readonly AnyStateNode[]
  guard?: unknown
  actions: readonly unknown[]
}

const nameOf = (x: unknown): string | undefined => {
  if (typeof x === 'string') return x
  if (x !== null && typeof x === 'object' && 'type' in x && typeof x.type === 'string') {
    const params = 'params' in x && typeof x.params === 'string' ? `(${x.params})` : ''
    return x.type + params
  }
  return undefined
}

function label(event: string, node: AnyStateNode, t: TransitionDef): string {
  const src = nameOf((node.invoke as Array<{ src: unknown }>)[0]?.src) ?? 'step'
  const what = event.startsWith('xstate.done.actor.')
    ? `${src} done`
    : event.startsWith('xstate.error.actor.')
      ? `${src} error`
      : event
  const guard = nameOf(t.guard)
  const actions = t.actions.map(nameOf).filter((a): a is string => a !== undefined)
  return `${what}${guard !== undefined ? ` [${guard}]` : ''}${actions.length > 0 ? ` / ${actions.join(', ')}` : ''}`
}

/** The machine's top-level states and transitions as a mermaid `stateDiagram-v2`. */
export function mermaidOf(machine: AnyStateMachine): string {
  const root = machine.root
  const lines = ['stateDiagram-v2', `  [*] --> ${nameOf(root.config.initial)}`]
  const states = Object.values(root.states as Record<string, AnyStateNode>)
  const edge = (from: string, t: TransitionDef, text: string) => {
    const to = t.target?.[0]?.key
    if (to !== undefined) lines.push(`  ${from} --> ${to} : ${text}`)
  }
  for (const node of states) {
    for (const [event, defs] of node.transitions as Map<string, TransitionDef[]>)
      for (const t of defs) edge(node.key, t, label(event, node, t))
    for (const t of (node.always ?? []) as TransitionDef[])
      edge(node.key, t, `always${t.guard === undefined ? ' (else)' : ''}${label('', node, t).trimEnd()}`)
    // Transitions of the machine itself apply in every state that does not handle the event.
    if (node.type !== 'final')
      for (const [event, defs] of root.transitions as Map<string, TransitionDef[]>)
        if (!(node.transitions as Map<string, unknown>).has(event))
          for (const t of defs) edge(node.key, t, label(event, node, t))
  }
  for (const node of states) if (node.type === 'final') lines.push(`  ${node.key} --> [*]`)
  return lines.join('\n')
}
