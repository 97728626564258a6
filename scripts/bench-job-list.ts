/**
 * Paging through stored jobs over the REST API's listing path (JobStore.page: the level index,
 * then each record), limit=100, on stores of growing size: time per page must not grow with the
 * store. For reference, the cost of the full read the listing did before the index.
 *
 *   node --import tsx scripts/bench-job-list.ts      # env: BENCH_SIZES (default 1000,5000,20000)
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { silentLogger } from '../dms/log.js'
import type { JobState } from '../dms/orchestrator/job-record.js'
import { decodeCursor } from '../dms/orchestrator/job-index.js'
import { JobStore, type StoredJob } from '../dms/orchestrator/job-store.js'
import { openDb } from '../dms/store/db.js'

const SIZES = (process.env.BENCH_SIZES ?? '1000,5000,20000').split(',').map(Number)
const LIMIT = 100
const STATES: JobState[] = ['completed', 'failed', 'cancelled', 'running']
const T0 = 1_800_000_000_000

/** A stored job about the size of a real completed one's record (~2 KiB). */
function job(i: number): StoredJob {
  return {
    state: STATES[i % STATES.length],
    record: {
      id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      spec: {
        name: `job ${i}`,
        image: 'dms-test:1',
        command: ['sh', '-c', 'echo hello; sleep 1'],
        env: { A: 'x'.repeat(200) },
        resources: { cpu: 0.5, memoryBytes: 64 << 20, diskBytes: 0, gpus: 0 },
        maxDurationSeconds: 60,
        maxPrice: 100_000,
        retries: 3,
        providers: { allow: [], deny: [] },
        ...(i % 2 === 0 ? { queue: 'q-bench' } : {}),
      },
      createdAt: T0 + i * 10,
      history: STATES.map((state, k) => ({ state, at: T0 + i * 10 + k })),
      bids: [],
      declines: [],
      tried: [],
      updates: [],
      error: { code: 'X', message: 'y'.repeat(1200) },
    },
  }
}

console.log(
  `load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
)
console.log(
  'store   query                pages  first page ms  median ms/page  p90 ms/page  last page ms  full read ms',
)
for (const size of SIZES) {
  const dir = await mkdtemp(join(tmpdir(), 'dms-bench-job-list-'))
  const db = await openDb(join(dir, 'db'))
  const store = new JobStore({ db, log: silentLogger })
  for (let i = 0; i < size; i++) await store.write(job(i), undefined)
  const t = performance.now()
  await store.values() // what GET /v1/jobs read on every request before the index
  const fullMs = performance.now() - t
  for (const [label, q] of [
    ['all', {}],
    ['state=failed', { state: 'failed' as JobState }],
    ['queue=q-bench', { queue: 'q-bench' }],
  ] as const) {
    const times: number[] = []
    const seen = new Set<string>()
    let position: string | undefined
    let prev = Infinity
    for (;;) {
      const t0 = performance.now()
      const page = await store.page({ ...q, limit: LIMIT, position })
      times.push(performance.now() - t0)
      for (const j of page.jobs) {
        if (seen.has(j.record.id)) throw new Error(`job ${j.record.id} listed twice`)
        if (j.record.createdAt > prev) throw new Error('out of order')
        prev = j.record.createdAt
        seen.add(j.record.id)
      }
      if (page.next === undefined) break
      position = decodeCursor(page.next)
    }
    const expected = label === 'all' ? size : size / (label === 'state=failed' ? 4 : 2)
    if (seen.size !== expected) throw new Error(`${label}: ${seen.size} of ${expected} jobs listed`)
    const sorted = [...times].sort((a, b) => a - b)
    const median = sorted[Math.floor(sorted.length / 2)]
    const p90 = sorted[Math.floor(sorted.length * 0.9)]
    console.log(
      `${String(size).padEnd(7)} ${label.padEnd(20)} ${String(times.length).padStart(5)}  ${times[0].toFixed(2).padStart(13)}  ${median.toFixed(2).padStart(14)}  ${p90.toFixed(2).padStart(11)}  ${times[times.length - 1].toFixed(2).padStart(12)}  ${label === 'all' ? fullMs.toFixed(1).padStart(12) : ''}`,
    )
  }
  await db.close()
  await rm(dir, { recursive: true, force: true })
}
