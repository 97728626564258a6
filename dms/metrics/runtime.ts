/**
 * The process's runtime metrics (prom-client's defaults: CPU, memory, heap, event loop lag, GC,
 * handles, open file descriptors; `process_*` and `nodejs_*`), one registry per process. Every
 * role renders them after its own families (specs/rest-api.md, "Metrics").
 */
import { collectDefaultMetrics, Registry } from 'prom-client'

let runtime: Registry | undefined

/**
 * Gauges prom-client names like counters: promtool refuses them ('non-counter metrics should not
 * have "_total" suffix'). Their per-type families (`nodejs_active_handles{type}`...) stay; the sum
 * is `sum(nodejs_active_handles)`.
 */
const MISNAMED = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
]

/**
 * The runtime registry, made at its first use. One per process, not one per node: the numbers
 * are the process's whatever node reads them, and each `collectDefaultMetrics` leaves a GC
 * observer and an event loop monitor running for good, so a test process that starts a hundred
 * nodes would otherwise hold a hundred of each.
 */
export function runtimeRegistry(): Registry {
  if (runtime === undefined) {
    runtime = new Registry()
    collectDefaultMetrics({ register: runtime })
    for (const name of MISNAMED) runtime.removeSingleMetric(name)
  }
  return runtime
}

/** `registry`'s families then the process's runtime families, in the text format 0.0.4. */
export async function renderWithRuntime(registry: Registry): Promise<string> {
  const [own, rt] = await Promise.all([registry.metrics(), runtimeRegistry().metrics()])
  return own + rt
}
