/** The task graph of a workflow: cycles (document.ts, pods.ts). */

/** The first cycle found (its names, first repeated at the end), or undefined. */
export function findCycle(tasks: ReadonlyArray<{ name: string; after: string[] }>): string[] | undefined {
  const byName = new Map(tasks.map((t) => [t.name, t]))
  const state = new Map<string, 'open' | 'done'>()
  const path: string[] = []
  const visit = (n: string): string[] | undefined => {
    if (state.get(n) === 'done') return undefined
    if (state.get(n) === 'open') return [...path.slice(path.indexOf(n)), n]
    state.set(n, 'open')
    path.push(n)
    for (const up of byName.get(n)?.after ?? []) {
      const found = visit(up)
      if (found !== undefined) return found
    }
    path.pop()
    state.set(n, 'done')
    return undefined
  }
  for (const t of tasks) {
    const found = visit(t.name)
    if (found !== undefined) return found.reverse()
  }
  return undefined
}
