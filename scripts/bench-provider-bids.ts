/**
 * The provider's bid book with many stored bids on a real level db: how long a start takes to
 * restore them, what a `/dms/job/cancel` costs (found in memory by contract id, whatever is
 * stored), and how long a sweep takes to prune the ended bids beyond the retention.
 *
 *   node --import tsx scripts/bench-provider-bids.ts    # env: BENCH_N stored bids (default 100000)
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fromPromise } from 'xstate'
import { systemClock } from '../actors/clock.js'
import type { Message } from '../actors/system.js'
import { silentLogger } from '../dms/log.js'
import { BidBook } from '../dms/provider/bid-book.js'
import { createBidMachine } from '../dms/provider/bid-machine.js'
import { bidRepo, type StoredBid } from '../dms/provider/bid-store.js'
import { cancelHandler } from '../dms/provider/handlers/cancel.js'
import type { JobCancel } from '../dms/protocol/messages.js'
import { openDb } from '../dms/store/db.js'

const N = Number(process.env.BENCH_N ?? 100_000)
const REQUESTER = '12D3KooWBenchRequester'

const dir = await mkdtemp(join(tmpdir(), 'dms-bench-bids-'))
const db = await openDb(join(dir, 'db'))
const repo = bidRepo(db)
const now = Date.now()
const ended = (i: number): StoredBid => ({
  v: 4,
  bidId: `b${i}`,
  state: 'released',
  at: now - N + i,
  snapshot: {
    value: 'released',
    context: {
      bid: {
        bidId: `b${i}`,
        jobId: `j${i}`,
        provider: '12D3KooWBenchProvider',
        resources: { cpu: 0.01, memoryBytes: 1 << 20, diskBytes: 0, gpus: 0 },
        image: 'dms-test:1',
        maxDurationSeconds: 60,
        pricePerHour: 10,
        minJobPrice: 1,
        total: 1,
        earliestStart: now,
        expectedFinish: now,
        expiresAt: now,
        resourcesReserved: true,
        signature: 'x'.repeat(86),
      },
      request: {
        jobId: `j${i}`,
        workloadNeeds: {
          members: [
            {
              name: 'main',
              artifact: { kind: 'image', ref: 'dms-test:1' },
              network: 'none',
              resources: { cpu: 0.01, memoryBytes: 1 << 20 },
            },
          ],
        },
        maxDurationSeconds: 60,
        maxPrice: 1,
        deadline: now,
        exclude: [],
      },
      requester: { publicKey: new Uint8Array(32), peer: REQUESTER, inbox: `job/j${i}`, addrs: [] },
      held: { cpu: 0.01, memoryBytes: 1 << 20, diskBytes: 0, gpus: 0 },
      contractId: `c${i}`,
      history: [
        { state: 'withdrawn', at: now },
        { state: 'released', at: now },
      ],
    },
  },
})
for (let i = 0; i < N; i += 1000)
  await db.batch(
    Array.from({ length: Math.min(1000, N - i) }, (_, k) => repo.putOp(`b${i + k}`, ended(i + k))),
  )

const noop = fromPromise(() => Promise.resolve()) as never
const machine = createBidMachine(systemClock, {
  contractWindowMs: 15_000,
  lockTtlMs: 60_000,
  provisionTimeoutMs: 300_000,
}).provide({
  actors: { deadline: noop, lock: noop, release: noop, deliver: noop },
})
const rows: Array<[string, number, number]> = []
const time = async (name: string, n: number, run: () => Promise<unknown>) => {
  const t0 = performance.now()
  await run()
  rows.push([name, n, performance.now() - t0])
}

// Keep them all at start (the default keeps 10 000), then prune to the default.
const book = new BidBook({ db, clock: systemClock, log: silentLogger, machine }, { retainEndedCount: N })
await time(`start: restore ${N} stored bids`, 1, () => book.start())
const cancel = cancelHandler({ book })
const msg = (contractId: string): Message<JobCancel> => ({
  behaviour: '/dms/job/cancel',
  from: { publicKey: new Uint8Array(32), peer: REQUESTER, inbox: 'job/x', addrs: [] },
  payload: { jobId: 'x', contractId },
  peer: REQUESTER,
  via: 'direct',
})
const C = 10_000
await time('cancel, unknown contract', C, async () => {
  for (let i = 0; i < C; i++) await cancel(msg(`unknown-${i}`))
})
await time('cancel, ended contract', C, async () => {
  for (let i = 0; i < C; i++) await cancel(msg(`c${i}`))
})
const pruning = new BidBook({ db, clock: systemClock, log: silentLogger, machine })
await pruning.start()
await time(`sweep: prune ${N} to 10000 ended bids`, 1, () => pruning.prune())

console.log(`provider bid book, ${N} stored bids (level, ${dir})`)
for (const [name, n, ms] of rows)
  console.log(
    `  ${name.padEnd(44)} ${String(n).padStart(6)} x  ${(ms / n).toFixed(n > 1 ? 4 : 0).padStart(10)} ms each`,
  )
await db.close()
await rm(dir, { recursive: true, force: true })
