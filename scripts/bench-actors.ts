/**
 * Actor runtime benchmark: envelope sign/verify throughput on one core, request/reply latency
 * between two nodes on loopback, and gossip delivery latency across 10, 50 and 100 nodes in this
 * one process (one-host settings, specs/config.md). Prints a table; stops by itself.
 *
 *   npx tsx scripts/bench-actors.ts
 *   env: BENCH_RR (requests, default 2000), BENCH_GOSSIP_SIZES (default 10,50,100),
 *        BENCH_GOSSIP_MSGS (broadcasts per size, default 20), BENCH_GOSSIP_INTERVAL_MS (default 250),
 *        BENCH_DEADLINE_S (default 240)
 *
 * Targets (issue 3): request/reply p50 <= 1 ms; >= 5,000 verified envelopes/s per core;
 * 100-node gossip delivery p99 <= 500 ms. Results: specs/protocol.md ("Performance").
 */
import '../actors/polyfill.js'
import { randomBytes } from 'node:crypto'
import { cpus } from 'node:os'
import { systemClock } from '../actors/clock.js'
import { decodeEnvelope, sealEnvelope, verifyEnvelope, type EnvelopeInit } from '../actors/envelope.js'
import { KeyPair } from '../actors/identity.js'
import { ActorSystem, type Message } from '../actors/system.js'
import { silentLogger } from '../dms/log.js'
import { createHost, type Host } from '../dms/network/host.js'
import { Libp2pTransport } from '../dms/network/transport.js'

const RR = Number(process.env.BENCH_RR ?? 2000)
const SIZES = (process.env.BENCH_GOSSIP_SIZES ?? '10,50,100').split(',').map(Number)
const MSGS = Number(process.env.BENCH_GOSSIP_MSGS ?? 20)
// One broadcast at a time through the network: all nodes share this process's CPU, so
// back-to-back broadcasts would measure this process's queue rather than propagation.
const INTERVAL_MS = Number(process.env.BENCH_GOSSIP_INTERVAL_MS ?? 250)
const DEADLINE = Date.now() + Number(process.env.BENCH_DEADLINE_S ?? 240) * 1000
const TOPIC = '/dms/bench/1'

// The whole run is bounded: whatever happens, the process ends.
setTimeout(
  () => {
    console.error('bench-actors: deadline reached, exiting')
    process.exit(3)
  },
  DEADLINE - Date.now() + 30_000,
).unref()

const rows: Array<[string, string, string]> = []
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]
}
const ms = (x: number) => `${x.toFixed(x < 10 ? 2 : 0)} ms`

interface Node {
  host: Host
  transport: Libp2pTransport
  system: ActorSystem
  addr: string
}

async function startNode(bootstrap: string[] = []): Promise<Node> {
  const host = await createHost(KeyPair.generate(), { oneHost: true, bootstrap })
  const transport = new Libp2pTransport({ host, log: silentLogger })
  const system = new ActorSystem({ transport, clock: systemClock, log: silentLogger })
  await host.start()
  await transport.start()
  return { host, transport, system, addr: host.getMultiaddrs()[0].toString() }
}

async function stopNodes(nodes: Node[]): Promise<void> {
  await Promise.all(
    nodes.map(async (n) => {
      n.system.stop()
      await n.transport.stop()
      await n.host.stop()
    }),
  )
}

/** Envelopes per second on this thread, for `seconds` of work. */
function throughput(seconds: number, fn: (i: number) => void): number {
  const end = performance.now() + seconds * 1000
  let i = 0
  const t0 = performance.now()
  while (performance.now() < end) for (let k = 0; k < 100; k++) fn(i++)
  return i / ((performance.now() - t0) / 1000)
}

function benchCrypto(): void {
  const key = KeyPair.generate()
  const init = (i: number): EnvelopeInit => ({
    sender: {
      publicKey: key.publicKey as Uint8Array<ArrayBuffer>,
      peer: '12D3KooWBench',
      inbox: 'a',
      addrs: [],
    },
    to: { peer: '12D3KooWOther', inbox: 'b' },
    behaviour: '/dms/job/bid',
    payload: randomBytes(200 + (i % 2)),
    issuedAt: Date.now(),
    ttlMs: 60_000,
  })
  const sealedPool = Array.from({ length: 2000 }, (_, i) => sealEnvelope(key, init(i)))
  const sign = throughput(1.5, (i) => sealEnvelope(key, init(i)))
  const verify = throughput(1.5, (i) => {
    if (!verifyEnvelope(decodeEnvelope(sealedPool[i % sealedPool.length]))) throw new Error('bad')
  })
  const both = throughput(1.5, (i) => {
    if (!verifyEnvelope(decodeEnvelope(sealEnvelope(key, init(i))))) throw new Error('bad')
  })
  rows.push(['envelope seal (encode + sign), 1 core', `${Math.round(sign).toLocaleString('en')} /s`, ''])
  rows.push([
    'envelope decode + verify, 1 core',
    `${Math.round(verify).toLocaleString('en')} /s`,
    'target >= 5,000/s',
  ])
  rows.push(['seal + decode + verify, 1 core', `${Math.round(both).toLocaleString('en')} /s`, ''])
}

async function benchRequestReply(): Promise<void> {
  const a = await startNode()
  const b = await startNode([a.addr])
  try {
    const svc = a.system.spawn('svc', KeyPair.generate()).on('/bench/echo', (m: Message) => m.payload)
    const client = b.system.spawn('client', KeyPair.generate())
    for (let i = 0; i < 200; i++) await client.request(svc.handle, '/bench/echo', i, { timeoutMs: 5000 })
    const lat: number[] = []
    for (let i = 0; i < RR && Date.now() < DEADLINE; i++) {
      const t0 = performance.now()
      await client.request(svc.handle, '/bench/echo', { i }, { timeoutMs: 5000 })
      lat.push(performance.now() - t0)
    }
    rows.push([
      `request/reply, 2 nodes, ${lat.length} sequential`,
      `p50 ${ms(pct(lat, 50))}`,
      'target p50 <= 1 ms',
    ])
    rows.push(['', `p99 ${ms(pct(lat, 99))}`, ''])
  } finally {
    await stopNodes([b, a])
  }
}

type Mesh = { getMeshPeers(topic: string): string[] }

/** Polls (this is a benchmark, not a test) until `ok()` or the time is up. */
async function until(ok: () => boolean, maxMs: number): Promise<boolean> {
  const end = Math.min(Date.now() + maxMs, DEADLINE)
  while (!ok()) {
    if (Date.now() > end) return false
    await new Promise((r) => setTimeout(r, 50))
  }
  return true
}

async function benchGossip(n: number): Promise<void> {
  const nodes: Node[] = []
  try {
    // A random connected graph: each node dials up to 3 earlier nodes.
    for (let i = 0; i < n; i++) {
      const boot = [
        ...new Set(Array.from({ length: Math.min(i, 3) }, () => nodes[Math.floor(Math.random() * i)].addr)),
      ]
      nodes.push(await startNode(boot))
    }
    const lat: number[] = []
    let received = 0
    for (const node of nodes)
      node.system
        .spawn('sub', KeyPair.generate())
        .subscribe(TOPIC)
        .on('/bench/news', (m: Message) => {
          received++
          lat.push(Date.now() - (m.payload as { at: number }).at)
        })
    const formed = await until(
      // getMeshPeers exists on the gossipsub implementation but not on its exported interface.
      () => nodes.every((x) => (x.host.services.pubsub as unknown as Mesh).getMeshPeers(TOPIC).length >= 1),
      30_000,
    )
    if (!formed && process.env.BENCH_DEBUG)
      for (const [i, x] of nodes.entries()) {
        const mesh = (x.host.services.pubsub as unknown as Mesh).getMeshPeers(TOPIC).length
        if (mesh === 0)
          console.error(
            `node ${i}: mesh 0, conns ${x.host.getConnections().length}, subs ${x.host.services.pubsub.getSubscribers(TOPIC).length}`,
          )
      }
    const publishers = nodes.map((x) => x.system.spawn('pub', KeyPair.generate()))
    const cpu0 = process.cpuUsage()
    const wall0 = performance.now()
    for (let k = 0; k < MSGS && Date.now() < DEADLINE; k++) {
      await publishers[Math.floor(Math.random() * n)].publish(TOPIC, '/bench/news', { at: Date.now(), k })
      await new Promise((r) => setTimeout(r, INTERVAL_MS))
    }
    const expected = MSGS * (n - 1)
    await until(() => received >= expected, 5000)
    const cpu = process.cpuUsage(cpu0)
    const busy = (cpu.user + cpu.system) / 1000 / (performance.now() - wall0)
    rows.push([
      `gossip delivery, ${n} nodes, ${MSGS} broadcasts ${INTERVAL_MS} ms apart${formed ? '' : ' (mesh incomplete)'}`,
      `p50 ${ms(pct(lat, 50))}`,
      n === 100 ? 'target p99 <= 500 ms' : '',
    ])
    rows.push([
      '',
      `p99 ${ms(pct(lat, 99))}`,
      `delivered ${received}/${expected}, process CPU ${(busy * 100).toFixed(0)}% of one core`,
    ])
  } finally {
    await stopNodes(nodes)
  }
}

async function main(): Promise<void> {
  benchCrypto()
  await benchRequestReply()
  for (const n of SIZES) if (Date.now() < DEADLINE) await benchGossip(n)
  const w = [Math.max(...rows.map((r) => r[0].length)), Math.max(...rows.map((r) => r[1].length))]
  console.log(
    `\nactor runtime, node ${process.version}, ${cpus().length} cores (${cpus()[0]?.model ?? '?'})\n`,
  )
  for (const [a, b, c] of rows) console.log(`${a.padEnd(w[0])}  ${b.padStart(w[1])}  ${c}`)
  const rss = process.memoryUsage().rss / 2 ** 20
  console.log(`\npeak-ish RSS at the end: ${rss.toFixed(0)} MiB`)
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err)
    process.exit(1)
  },
)
