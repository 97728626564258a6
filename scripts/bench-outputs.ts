/**
 * Memory of one large output through the real path (specs/data-plane.md, "Outputs"): a devnet of
 * separate `dms` processes (contract-db, one provider, a requester) runs a job that writes
 * BENCH_OUTPUT_MIB (default 250) MiB of random bytes to /outputs. The provider collects and
 * archives it, the requester fetches and checks the archive, then `GET /v1/jobs/:id/outputs.tar`
 * is downloaded BENCH_DOWNLOADS (default 4) times. Prints each node's peak RSS (VmHWM) and current
 * RSS (VmRSS) before the job, after it settled, and after the downloads.
 *
 *   npm run build && node --import tsx scripts/bench-outputs.ts
 *
 * Uses only the REST API, so the same script measures any version of the node.
 */
import { execFileSync } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { ApiClient } from '../dms/api/client.js'
import { startDevnet, type DevnetProc } from '../dms/cli/devnet.js'

const MiB = 1024 * 1024
const OUTPUT_MIB = Number(process.env.BENCH_OUTPUT_MIB ?? 250)
const DOWNLOADS = Number(process.env.BENCH_DOWNLOADS ?? 4)
const IMAGE = process.env.DMS_TEST_IMAGE ?? 'dms-test:1'

setTimeout(() => {
  console.error('bench-outputs: 10 minutes passed, exiting')
  process.exit(3)
}, 10 * 60_000).unref()

/** Peak and current resident set of a process, in MiB, from /proc/<pid>/status. */
async function rss(p: DevnetProc): Promise<{ peak: number; now: number }> {
  const status = await readFile(`/proc/${p.child.pid}/status`, 'utf8')
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN)
  return { peak: Math.round(kib('VmHWM') / 1024), now: Math.round(kib('VmRSS') / 1024) }
}

execFileSync('bash', [join(import.meta.dirname, 'build-test-image.sh')], { stdio: 'inherit' })
const net = await startDevnet({ providers: 1 })
const rows: Array<[string, string, string]> = []
const sample = async (when: string) => {
  const p = await rss(net.providers[0])
  const r = await rss(net.requester)
  rows.push([when, `${p.peak} / ${p.now}`, `${r.peak} / ${r.now}`])
}
try {
  const api = new ApiClient(net.requester.socket)
  await sample('idle')
  const t0 = performance.now()
  const { id } = await api.ok<{ id: string }>('POST', '/v1/jobs', {
    image: IMAGE,
    command: ['sh', '-c', `head -c ${OUTPUT_MIB * MiB} /dev/urandom > /outputs/big.bin`],
    resources: { cpu: 0.5, memory: '64MiB', disk: `${OUTPUT_MIB + 16}MiB` },
    maxDuration: 300,
    maxPrice: 10_000_000,
  })
  let job: {
    state: string
    verification?: { outputsHashOk: boolean }
    result?: { archive?: { size: number } }
  }
  for (;;) {
    job = await api.ok('GET', `/v1/jobs/${id}`)
    if (['completed', 'failed', 'cancelled'].includes(job.state)) break
    await new Promise((r) => setTimeout(r, 250))
  }
  const seconds = (performance.now() - t0) / 1000
  if (job.state !== 'completed' || job.verification?.outputsHashOk !== true)
    throw new Error(`job ended ${job.state}: ${JSON.stringify(job).slice(0, 600)}`)
  await sample(`after the job (${seconds.toFixed(1)} s)`)
  let bytes = 0
  for (let i = 0; i < DOWNLOADS; i++) {
    const res = await api.raw('GET', `/v1/jobs/${id}/outputs.tar`, { onData: (c) => (bytes += c.length) })
    if (res.status !== 200) throw new Error(`outputs.tar: HTTP ${res.status}`)
  }
  await sample(`after ${DOWNLOADS} downloads of outputs.tar`)
  console.log(
    `\n${OUTPUT_MIB} MiB output, archive ${job.result?.archive?.size} bytes, ${bytes} bytes downloaded\n`,
  )
  const head: [string, string, string] = ['', 'provider peak / now MiB', 'requester peak / now MiB']
  const width = head.map((_, i) => Math.max(...[head, ...rows].map((r) => r[i].length)))
  for (const r of [head, ...rows]) console.log(r.map((c, i) => c.padEnd(width[i])).join('  '))
} finally {
  await net.stop()
}
