/** Small prom-client helpers shared by the node's metric families. */
import { Counter, Gauge, type Registry } from 'prom-client'

/** Counts by label value, as a part keeps them in memory (`{ no_approval: 3 }`). */
export type Counts = Readonly<Partial<Record<string, number>>>

/** Adds every count of `counts` to `counter` (labelled `label`): a part's counts before we listened. */
export function seed<L extends string>(counter: Counter<L>, label: L, counts: Counts): void {
  for (const [value, n] of Object.entries(counts))
    if (n !== undefined) counter.inc({ [label]: value } as Record<L, string>, n)
}

/**
 * A counter a part keeps itself, as it counts (in memory): the scrape copies it. For counts whose
 * part tells nobody as it counts; never for anything read from the store.
 */
export function mirroredCounter<L extends string>(
  registry: Registry,
  name: string,
  help: string,
  label: L,
  read: () => Counts,
): Counter<L> {
  return new Counter({
    name,
    help,
    labelNames: [label],
    registers: [registry],
    collect() {
      this.reset()
      seed(this, label, read())
    },
  })
}

/** A gauge set from memory at each scrape (connections, actors, the ledger's sums). */
export function readGauge(registry: Registry, name: string, help: string, read: () => number): Gauge {
  return new Gauge({
    name,
    help,
    registers: [registry],
    collect() {
      this.set(read())
    },
  })
}
