/**
 * The REST API's cost per request on one node: the unix socket vs the TCP listener with its
 * bearer token check, for `GET /v1/health`, `GET /v1/jobs` (with stored jobs) and `GET /metrics`.
 * Sequential keep-alive requests from one client.
 *
 *   node --import tsx --import ./actors/polyfill.ts scripts/bench-api.ts   # env: BENCH_N (default 2000)
 */
import { randomUUID } from 'node:crypto'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { Agent, request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DmsNode } from '../dms/node.js'

const N = Number(process.env.BENCH_N ?? 2000)
const JOBS = 200
const dir = await mkdtemp(join(tmpdir(), 'dms-bench-api-'))
const node = new DmsNode(
  {
    dataDir: dir,
    oneHost: true,
    api: { tcp: { port: 0 } },
    requester: {
      contractDb: { peer: '12D3KooWJQrvaMvVy9RQ6bN3CXC7V2ju9SCjisqSYshAjur2e6f4', addrs: [] },
    },
  },
  { passphrase: () => Promise.resolve('bench passphrase') },
)
await node.start()
// Stored jobs for the list to read (records as the orchestrator keeps them). /metrics does not
// read them: its counts are kept at events, so its cost does not grow with the store.
for (let i = 0; i < JOBS; i++) {
  const id = randomUUID()
  await node.orchestrator!.jobs.put(id, {
    state: 'completed',
    record: {
      id,
      spec: { name: 'b' },
      createdAt: Date.now(),
      history: [],
      bids: [],
      declines: [],
      tried: [],
    },
  } as never)
}
const token = (await readFile(join(dir, 'api-token'), 'utf8')).trim()
const [host, port] = node.apiTcpAddress!.split(':')

async function bench(
  target: 'socket' | 'tcp',
  path: string,
): Promise<{ perSec: number; p50: number; p99: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  const opts =
    target === 'socket'
      ? { socketPath: node.socketPath!, agent }
      : { host, port: Number(port), agent, headers: { authorization: `Bearer ${token}` } }
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const req = request({ ...opts, path }, (res) => {
        res.resume()
        res.on('end', () =>
          res.statusCode === 200 ? resolve() : reject(new Error(`${path}: ${res.statusCode}`)),
        )
      })
      req.on('error', reject)
      req.end()
    })
  for (let i = 0; i < 50; i++) await one()
  const times: number[] = []
  const t0 = performance.now()
  for (let i = 0; i < N; i++) {
    const s = performance.now()
    await one()
    times.push(performance.now() - s)
  }
  const total = performance.now() - t0
  agent.destroy()
  times.sort((a, b) => a - b)
  return { perSec: (N / total) * 1000, p50: times[Math.floor(N * 0.5)], p99: times[Math.floor(N * 0.99)] }
}

console.log(`REST API, ${N} sequential keep-alive requests each (${JOBS} stored jobs)`)
console.log('| route | listener | req/s | p50 ms | p99 ms |')
console.log('|---|---|---:|---:|---:|')
for (const path of ['/v1/health', '/v1/jobs', '/metrics'])
  for (const target of ['socket', 'tcp'] as const) {
    const r = await bench(target, path)
    console.log(
      `| ${path} | ${target} | ${r.perSec.toFixed(0)} | ${r.p50.toFixed(3)} | ${r.p99.toFixed(3)} |`,
    )
  }
await node.stop()
await rm(dir, { recursive: true, force: true })
