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

/**
 * The actor an `xstate.done.actor.<id>` (or error) event comes from: the invoke's own id when it
 * was given one, else its source (generated ids hold dots).
 */
function actorOf(event: string, node: AnyStateNode): string {
  const invokes = node.invoke as Array<{ id: string; src: unknown }>
  const id = event.replace(/^xstate\.(done|error)\.actor\./, '')
  const inv = invokes.find((i) => i.id === id) ?? invokes[0]
  if (inv === undefined) return 'step'
  return !inv.id.includes('.') ? inv.id : (nameOf(inv.src) ?? 'step')
}

function label(event: string, node: AnyStateNode, t: TransitionDef): string {
  const src = actorOf(event, node)
  const what = event.startsWith('xstate.done.actor.')
    ? `${src} done`
    : event.startsWith('xstate.error.actor.')
      ? `${src} error`
      : event
  const guard = nameOf(t.guard)
  const actions = t.actions.map(nameOf).filter((a): a is string => a !== undefined)
  return `${what}${guard !== undefined ? ` [${guard}]` : ''}${actions.length > 0 ? ` / ${actions.join(', ')}` : ''}`
}

/**
 * The machine's states and transitions as a mermaid `stateDiagram-v2`; a compound state is drawn
 * as a composite (`state x { ... }`) holding its own states.
 */
export function mermaidOf(machine: AnyStateMachine): string {
  const root = machine.root
  const lines = ['stateDiagram-v2']
  const draw = (parent: AnyStateNode, indent: string) => {
    lines.push(`${indent}[*] --> ${nameOf(parent.config.initial)}`)
    const states = Object.values(parent.states as Record<string, AnyStateNode>)
    const edge = (from: string, t: TransitionDef, text: string) => {
      const to = t.target?.[0]?.key
      if (to !== undefined) lines.push(`${indent}${from} --> ${to} : ${text}`)
    }
    for (const node of states) {
      if (Object.keys(node.states).length > 0) {
        lines.push(`${indent}state ${node.key} {`)
        draw(node, `${indent}  `)
        lines.push(`${indent}}`)
      }
      for (const [event, defs] of node.transitions as Map<string, TransitionDef[]>)
        for (const t of defs) edge(node.key, t, label(event, node, t))
      for (const t of (node.always ?? []) as TransitionDef[])
        edge(node.key, t, `always${t.guard === undefined ? ' (else)' : ''}${label('', node, t).trimEnd()}`)
      // Transitions of the machine itself apply in every state that does not handle the event.
      if (node.type !== 'final' && parent === root)
        for (const [event, defs] of root.transitions as Map<string, TransitionDef[]>)
          if (!(node.transitions as Map<string, unknown>).has(event))
            for (const t of defs) edge(node.key, t, label(event, node, t))
    }
    for (const node of states) if (node.type === 'final') lines.push(`${indent}${node.key} --> [*]`)
  }
  draw(root, '  ')
  return lines.join('\n')
}
