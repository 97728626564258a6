/**
 * A gossip flood against a provider (issue 13, item 6): how long `GET /v1/health` takes while
 * peers flood the bid-request topic with forged bid requests (well-formed envelopes whose
 * signature does not verify), and how many of them reached the validator. The provider is a real
 * node in its own process (scripts/bench-node.ts: default settings, no container engine), the
 * flooders share a second one, and this one only asks `/v1/health`. Prints a table; not a test;
 * stops by itself.
 *
 *   npx tsx scripts/bench-gossip-flood.ts
 *   env: BENCH_FLOODERS (default 4), BENCH_FLOOD_S (seconds of flood, default 10),
 *        BENCH_INFLIGHT (publishes in flight per flooder, default 64)
 *
 * Results: specs/protocol.md ("Gossip scoring").
 */
import '../actors/polyfill.js'
import { fork, spawn } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { systemClock } from '../actors/clock.js'
import { Envelope, sealEnvelope } from '../actors/envelope.js'
import { KeyPair } from '../actors/identity.js'
import { ActorSystem } from '../actors/system.js'
import { ApiClient } from '../dms/api/client.js'
import { silentLogger } from '../dms/log.js'
import { W } from '../dms/protocol/behaviours.js'
import { PROTOCOL_VERSION } from '../dms/protocol/version.js'
import { BID_REQUEST_TOPIC } from '../dms/protocol/handles.js'
import { createHost, type Host } from '../dms/network/host.js'
import { Libp2pTransport } from '../dms/network/transport.js'

const FLOODERS = Number(process.env.BENCH_FLOODERS ?? 4)
const FLOOD_MS = Number(process.env.BENCH_FLOOD_S ?? 10) * 1000
const INFLIGHT = Number(process.env.BENCH_INFLIGHT ?? 64)
const ROOT = join(fileURLToPath(import.meta.url), '../..')
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]
}

setTimeout(() => {
  console.error('bench-gossip-flood: took too long, exiting')
  process.exit(3)
}, 60_000 + FLOOD_MS).unref()

/** Starts the provider in its own process; resolves with its ready line. */
async function startProvider(dir: string) {
  const cfgPath = join(dir, 'node.json')
  await writeFile(
    cfgPath,
    JSON.stringify({
      dataDir: join(dir, 'provider'),
      oneHost: true,
      provider: {
        contractDb: '12D3KooWJQrvaMvVy9RQ6bN3CXC7V2ju9SCjisqSYshAjur2e6f4', // never contacted here
        offer: {
          cpu: 1,
          memoryBytes: 1 << 30,
          diskBytes: 1 << 30,
          gpus: 0,
          prices: {
            perCpuHour: 1000,
            perGiBMemoryHour: 10,
            perGiBDiskHour: 0,
            perGpuHour: 0,
            minJobPrice: 1,
          },
        },
      },
    }),
  )
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '--import', './actors/polyfill.ts', 'scripts/bench-node.ts', cfgPath],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
  )
  const line = await new Promise<string>((resolve) =>
    createInterface({ input: child.stdout }).once('line', resolve),
  )
  return { child, ready: JSON.parse(line) as { peerId: string; addrs: string[]; socket: string } }
}

/** One flooder: a node of its own publishing forged bid requests as fast as it can until `until`. */
async function flood(
  addr: string,
  until: number,
): Promise<{ host: Host; sent: () => number; done: Promise<void> }> {
  const host = await createHost(KeyPair.generate(), { oneHost: true, bootstrap: [addr] })
  const transport = new Libp2pTransport({ host, log: silentLogger })
  const system = new ActorSystem(
    { transport, clock: systemClock, log: silentLogger },
    { version: PROTOCOL_VERSION },
  )
  await host.start()
  await transport.start()
  await transport.waitForTopicPeers(BID_REQUEST_TOPIC, 1)
  const actor = system.spawn('m', KeyPair.generate())
  const forged = Envelope.decode(
    sealEnvelope(actor.key, {
      sender: system.handleOf(actor),
      topic: BID_REQUEST_TOPIC,
      behaviour: W.bidRequest.name,
      payload: new Uint8Array(64),
      issuedAt: Date.now(),
      ttlMs: 60_000,
      version: PROTOCOL_VERSION,
    }),
  )
  forged.payload = new Uint8Array(64).fill(1)
  const bytes = Envelope.encode(forged)
  let sent = 0
  const worker = async () => {
    while (Date.now() < until) {
      await host.services.pubsub.publish(BID_REQUEST_TOPIC, bytes).catch(() => undefined)
      sent++
      // publish can settle in microtasks alone: yield, or the workers starve all I/O here.
      await new Promise((r) => setImmediate(r))
    }
  }
  const done = Promise.all(Array.from({ length: INFLIGHT }, worker)).then(() => undefined)
  return { host, sent: () => sent, done }
}

/** GET /v1/health latencies (ms), one request at a time, until `until`. */
async function probe(api: ApiClient, until: number): Promise<number[]> {
  const out: number[] = []
  while (Date.now() < until) {
    const t0 = performance.now()
    const r = await api.call('GET', '/v1/health')
    if (r.status !== 200) throw new Error(`health answered ${r.status}`)
    out.push(performance.now() - t0)
    await sleep(20)
  }
  return out
}

/** The flooders' process: floods until `until`, then reports how many it published. */
async function flooders(addr: string, until: number): Promise<void> {
  const all = await Promise.all(Array.from({ length: FLOODERS }, () => flood(addr, until)))
  process.send?.('ready')
  await Promise.all(all.map((f) => f.done))
  process.send?.({ sent: all.reduce((n, f) => n + f.sent(), 0) })
  for (const f of all) await f.host.stop()
  process.exit(0)
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'dms-bench-flood-'))
  const { child, ready } = await startProvider(dir)
  try {
    const api = new ApiClient(ready.socket)
    const quiet = await probe(api, Date.now() + 3000)
    const start = Date.now() + 3000 // time for the flooders to connect; the flood runs from then
    const until = start + FLOOD_MS
    const floodProc = fork(fileURLToPath(import.meta.url), ['--flood', ready.addrs[0], String(until)], {
      execArgv: ['--import', 'tsx'],
    })
    const messages: unknown[] = []
    const next = () =>
      new Promise<unknown>((resolve) => {
        if (messages.length > 0) return resolve(messages.shift())
        floodProc.once('message', () => resolve(messages.shift()))
      })
    floodProc.on('message', (m) => messages.push(m))
    await next() // 'ready'
    const during = await probe(api, until)
    const { sent } = (await next()) as { sent: number }
    const info = (await api.call<{ rejections: Record<string, number> }>('GET', '/v1/info')).body
    const row = (label: string, xs: number[]) =>
      `${label.padEnd(44)}${String(xs.length).padStart(6)}${pct(xs, 50).toFixed(1).padStart(9)}${pct(xs, 99).toFixed(1).padStart(9)}${Math.max(
        ...xs,
      )
        .toFixed(1)
        .padStart(9)}`
    console.log(
      `bench-gossip-flood: ${FLOODERS} flooders x ${INFLIGHT} in flight for ${FLOOD_MS / 1000} s; provider, flooders and this probe in three processes`,
    )
    console.log(
      `${'GET /v1/health'.padEnd(44)}${'n'.padStart(6)}${'p50 ms'.padStart(9)}${'p99 ms'.padStart(9)}${'max ms'.padStart(9)}`,
    )
    console.log(row('quiet', quiet))
    console.log(row('during the flood', during))
    const validated = Object.values(info.rejections).reduce((a, b) => a + b, 0)
    console.log(
      `forged bid requests published: ${sent}; reached the provider's validator: ${validated} ${JSON.stringify(info.rejections)}`,
    )
  } finally {
    child.kill('SIGTERM')
    await new Promise((r) => child.once('exit', r))
    await rm(dir, { recursive: true, force: true })
  }
  process.exit(0)
}

const at = process.argv.indexOf('--flood')
if (at >= 0) await flooders(process.argv[at + 1], Number(process.argv[at + 2]))
else await main()
