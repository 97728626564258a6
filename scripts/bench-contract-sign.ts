/**
 * The provider's part of the lock and the contract, alone (no network): a job request then the
 * terms (two requests, as before the lock was folded into the contract) against the terms for the
 * reserved bid (one request, folded), interleaved, over the real handlers, bid book, bid machine
 * and resource ledger on level in a temp dir (the test harness: fake runs, a ManualClock). Prints
 * the wall time per bid (p50, p90), CPU ms per bid and the bid records written per bid.
 * Spec: specs/protocol.md ("The lock folded into the contract").
 *
 *   node --import tsx --import ./actors/polyfill.ts scripts/bench-contract-sign.ts
 *   env: BENCH_N bids per form (default 300); BENCH_FOLDED=0 only the job request then the terms
 *   (for a tree before the fold, to compare the same form across trees)
 */
import { waitFor } from 'xstate'
import { contractSignHandler } from '../dms/provider/handlers/contract-sign.js'
import { jobRequestHandler } from '../dms/provider/handlers/job-request.js'
import { Harness } from '../test/helpers/provider-harness.js'

const N = Number(process.env.BENCH_N ?? 300)
const h = await new Harness().start()
const sign = contractSignHandler({
  book: h.book,
  key: h.provider.key,
  peerId: () => h.provider.peer,
  contractDb: h.contractDb.peer,
})
const lock = jobRequestHandler({ book: h.book })
let writes = 0
h.book.onTransition(() => writes++)

type Mode = 'job request, then terms' | 'terms for the reserved bid (folded)'
const modes: Mode[] = ['job request, then terms', 'terms for the reserved bid (folded)'].slice(
  0,
  process.env.BENCH_FOLDED === '0' ? 1 : 2,
) as Mode[]
const stats = new Map<Mode, { ms: number[]; cpuUs: number; writes: number }>(
  modes.map((m) => [m, { ms: [], cpuUs: 0, writes: 0 }]),
)

for (let i = 0; i < N * modes.length; i++) {
  const mode = modes[i % modes.length]
  const bid = await h.bid(`job-${i}`)
  const contract = h.contract(bid)
  const msg = h.msg({ contract }, h.requester, `job/job-${i}`)
  const w0 = writes
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  if (mode === modes[0]) await lock(h.msg({ jobId: bid.jobId, bidId: bid.bidId }))
  await sign(msg)
  const ms = performance.now() - t0
  const cpu = process.cpuUsage(cpu0)
  const s = stats.get(mode)!
  s.ms.push(ms)
  s.cpuUs += cpu.user + cpu.system
  s.writes += writes - w0
  // Given up, so the next bid has room (one requester may hold half the offer).
  const actor = h.book.actor(bid.bidId)!
  actor.send({ type: 'RELEASE', reason: 'bench' })
  await waitFor(actor, (snap) => snap.status === 'done')
  await h.book.persisted(bid.bidId)
}
await h.close()

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * (p / 100))]
const rows = modes.map((m) => {
  const s = stats.get(m)!
  return [
    m,
    pct(s.ms, 50).toFixed(2),
    pct(s.ms, 90).toFixed(2),
    (s.cpuUs / N / 1000).toFixed(2),
    (s.writes / N).toFixed(1),
  ]
})
const head = ['provider handles', 'wall ms p50', 'p90', 'CPU ms/bid', 'bid writes/bid']
const width = head.map((x, i) => Math.max(x.length, ...rows.map((r) => r[i].length)))
for (const r of [head, ...rows]) process.stdout.write(`${r.map((x, i) => x.padEnd(width[i])).join('  ')}\n`)
process.stdout.write(`${N} bids each, interleaved\n`)
