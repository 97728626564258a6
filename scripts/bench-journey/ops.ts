/**
 * Section "ops": what one job costs in counted operations, which do not depend on the machine's
 * load: Ed25519 signatures made and verified, and level writes (with the bytes they carry) by
 * sublevel, per job, over every node (10 nodes in this process: the requester and 9 noop
 * providers, plus the contract-db), 20 sequential jobs after a warm-up. Counted by wrapping
 * node:crypto's sign/verify and classic-level's write calls in this process only.
 */
import { createRequire, syncBuiltinESMExports } from 'node:module'
import { ClassicLevel } from 'classic-level'
import { NoopExecutor } from '../../dms/executor/noop.js'
import { JOBS, network, oneJob, results, table } from './common.js'

type Fn = (...a: unknown[]) => unknown
const counts = new Map<string, { n: number; bytes: number }>()
const count = (k: string, bytes = 0) => {
  const e = counts.get(k) ?? { n: 0, bytes: 0 }
  e.n++
  e.bytes += bytes
  counts.set(k, e)
}
/** The sublevel of a key (`!jobs!<id>` -> `jobs`). */
const sublevelOf = (key: unknown) => String(key).split('!')[1] ?? '(root)'

function instrument(): void {
  const crypto = createRequire(import.meta.url)('node:crypto') as Record<string, Fn>
  const { sign, verify } = crypto
  crypto.sign = (...a: unknown[]) => (count('ed25519 sign'), sign(...a))
  crypto.verify = (...a: unknown[]) => (count('ed25519 verify'), verify(...a))
  syncBuiltinESMExports()
  const proto = ClassicLevel.prototype as unknown as Record<string, Fn>
  const { _put: put, _batch: batch } = proto
  proto._put = function (this: unknown, ...a: unknown[]) {
    count(`level put ${sublevelOf(a[0])}`, (a[1] as string).length)
    return put.apply(this, a)
  }
  proto._batch = function (this: unknown, ...a: unknown[]) {
    const ops = a[0] as Array<{ key: unknown; value?: string }>
    const subs = [...new Set(ops.map((o) => sublevelOf(o.key)))].sort().join('+')
    count(
      `level batch ${subs}`,
      ops.reduce((s, o) => s + (o.value?.length ?? 0), 0),
    )
    return batch.apply(this, a)
  }
}

export async function opsSection(): Promise<void> {
  instrument()
  const net = await network(9, new NoopExecutor())
  const jobs = Math.max(JOBS, 20)
  try {
    await oneJob(net)
    await oneJob(net)
    counts.clear()
    for (let i = 0; i < jobs; i++) await oneJob(net)
  } finally {
    await net.stop()
  }
  const per = (x: number) => x / jobs
  const rows = [...counts].sort((a, b) => b[1].n - a[1].n)
  const writes = rows.filter(([k]) => k.startsWith('level'))
  const total = (f: (e: { n: number; bytes: number }) => number) => writes.reduce((s, [, e]) => s + f(e), 0)
  table(
    `   operations per job (10 nodes in one process, ${jobs} sequential jobs; load-independent)`,
    ['operation', 'per job', 'bytes each'],
    [
      ...rows.map(([k, e]) => [k, per(e.n).toFixed(1), e.bytes > 0 ? (e.bytes / e.n).toFixed(0) : '']),
      ['level writes, all', per(total((e) => e.n)).toFixed(1), ''],
      ['level bytes written per job, all', (per(total((e) => e.bytes)) / 1024).toFixed(1) + ' KiB', ''],
    ],
  )
  results.ops = Object.fromEntries(rows.map(([k, e]) => [k, { perJob: per(e.n), bytesEach: e.bytes / e.n }]))
}
