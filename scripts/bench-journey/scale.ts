/** Section 3: job latency as the network grows (noop executor, sequential jobs). */
import { NoopExecutor } from '../../dms/executor/noop.js'
import { f0, JOBS, network, oneJob, pct, results, SCALE, table } from './common.js'

async function scale(nodes: number): Promise<number[]> {
  const net = await network(nodes - 1, new NoopExecutor())
  try {
    await oneJob(net)
    const out: number[] = []
    for (let i = 0; i < JOBS; i++) out.push((await oneJob(net)).total)
    return out
  } finally {
    await net.stop()
  }
}

export async function scaleSection(): Promise<void> {
  const rows: Array<Array<string | number>> = []
  const out: Record<string, { p50: number; p99: number }> = {}
  for (const n of SCALE) {
    const xs = await scale(n)
    out[n] = { p50: pct(xs, 50), p99: pct(xs, 99) }
    rows.push([n, f0(pct(xs, 50)), f0(pct(xs, 99))])
  }
  const first = out[SCALE[0]].p50
  const last = out[SCALE.at(-1)!].p50
  table('3. scale, noop executor, job latency (ms)', ['nodes', 'p50', 'p99'], rows)
  console.log(
    `\n   ${SCALE.at(-1)}-node p50 / ${SCALE[0]}-node p50 = ${(last / first).toFixed(2)} (target <= 1.5)`,
  )
  results.scale = out
}
