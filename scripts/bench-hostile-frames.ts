/**
 * Memory held by half-sent frames (issue 13, item 5). A victim node runs in a child process with
 * the default network settings; N attacker peers each open a direct actor stream to it, announce
 * a 4 MiB frame, send all of it but the last byte, and stall. Prints the victim's RSS and heap
 * before, while the frames are held, after the read deadline, and after the attackers disconnect
 * (each after a forced GC), with the victim's rejection counters. Not a test; stops by itself.
 *
 *   npx tsx scripts/bench-hostile-frames.ts
 *   env: BENCH_PEERS (attackers, default 30), BENCH_FRAME_MIB (announced frame, default 4),
 *        BENCH_FRAME_TIMEOUT_MS (the victim's network.frameReadTimeoutMs, default: the default),
 *        BENCH_DISCONNECT_FIRST=1 (the peers disconnect before the read deadline)
 *
 * Results: specs/protocol.md ("Transport").
 */
import '../actors/polyfill.js'
import { fork, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { multiaddr } from '@multiformats/multiaddr'
import * as lp from 'it-length-prefixed'
import { systemClock } from '../actors/clock.js'
import { KeyPair } from '../actors/identity.js'
import { ActorSystem } from '../actors/system.js'
import { silentLogger } from '../dms/log.js'
import { createHost, type Host } from '../dms/network/host.js'
import { ACTOR_PROTOCOL, Libp2pTransport } from '../dms/network/transport.js'

const PEERS = Number(process.env.BENCH_PEERS ?? 30)
const FRAME = Number(process.env.BENCH_FRAME_MIB ?? 4) * 1024 * 1024
const TIMEOUT =
  process.env.BENCH_FRAME_TIMEOUT_MS === undefined ? undefined : Number(process.env.BENCH_FRAME_TIMEOUT_MS)
/** Disconnect the peers right after "during", before the read deadline. */
const DISCONNECT_FIRST = process.env.BENCH_DISCONNECT_FIRST === '1'
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

type Mem = { rss: number; heapUsed: number; external: number; arrayBuffers: number }
type Stats = { mem: Mem; rejections: Record<string, number>; connections: number }
type Reply = { addr: string } | Stats

/** The victim: one node with default settings (but the frame read deadline, if given). */
async function victim(): Promise<void> {
  const host = await createHost(KeyPair.generate(), { oneHost: true })
  const transport = new Libp2pTransport({ host, log: silentLogger }, { frameReadTimeoutMs: TIMEOUT })
  const system = new ActorSystem({ transport, clock: systemClock, log: silentLogger })
  await host.start()
  await transport.start()
  const send = (m: Reply) => process.send?.(m)
  process.on('message', (m: string) => {
    if (m === 'mem') {
      const gc = (globalThis as { gc?: () => void }).gc
      gc?.()
      gc?.()
      const { rss, heapUsed, external, arrayBuffers } = process.memoryUsage()
      send({
        mem: { rss, heapUsed, external, arrayBuffers },
        rejections: { ...system.rejections },
        connections: host.getConnections().length,
      })
    }
    if (m === 'stop') void Promise.resolve(host.stop()).then(() => process.exit(0))
  })
  send({ addr: host.getMultiaddrs()[0].toString() })
}

function ask(child: ChildProcess, what: string): Promise<Reply> {
  return new Promise((resolve) => {
    child.once('message', (m) => resolve(m as Reply))
    child.send(what)
  })
}

async function main(): Promise<void> {
  const child = fork(fileURLToPath(import.meta.url), ['--victim'], {
    execArgv: ['--import', 'tsx', '--expose-gc'],
    env: process.env,
  })
  const { addr } = await new Promise<{ addr: string }>((r) =>
    child.once('message', (m) => r(m as { addr: string })),
  )
  const rows: Array<[string, Mem, Record<string, number>]> = []
  const measure = async (label: string) => {
    const r = (await ask(child, 'mem')) as Stats
    rows.push([label, r.mem, r.rejections])
  }
  const attackers: Host[] = []
  for (let i = 0; i < PEERS; i++) {
    const h = await createHost(KeyPair.generate(), { oneHost: true })
    await h.start()
    await h.dial(multiaddr(addr))
    attackers.push(h)
  }
  await sleep(1000)
  await measure(`before (${PEERS} peers connected)`)
  const t0 = Date.now()
  const frame = lp.encode.single(new Uint8Array(FRAME)).subarray()
  const stalled = frame.subarray(0, frame.length - 1)
  await Promise.all(
    attackers.map(async (h) => {
      try {
        const s = await h.dialProtocol(multiaddr(addr), ACTOR_PROTOCOL)
        for (let off = 0; off < stalled.length; off += 64 * 1024)
          if (!s.send(stalled.subarray(off, off + 64 * 1024))) await s.onDrain()
      } catch {
        /* refused by the victim (budget): that is the point */
      }
    }),
  )
  await sleep(2000)
  await measure(`during (${PEERS} x ${FRAME / 1048576} MiB announced, last byte withheld)`)
  const deadline = TIMEOUT ?? 30_000
  if (!DISCONNECT_FIRST) {
    await sleep(Math.max(0, t0 + deadline + 3000 - Date.now()))
    await measure(`after the read deadline (${deadline} ms), peers still connected`)
  }
  await Promise.all(attackers.map(async (h) => h.stop()))
  // Until the victim has seen every connection close (a bench may poll), then a little longer.
  while (((await ask(child, 'mem')) as Stats).connections > 0) await sleep(200)
  await sleep(1000)
  await measure('after the peers disconnected')
  child.send('stop')

  const mib = (b: number) => `${(b / 1048576).toFixed(0)} MiB`
  console.log(`bench-hostile-frames: ${PEERS} peers, frame ${FRAME} bytes, victim in its own process`)
  console.log(
    ['phase'.padEnd(72), 'rss'.padStart(9), 'heap'.padStart(9), 'buffers'.padStart(9), '  rejections'].join(
      '',
    ),
  )
  for (const [label, m, rej] of rows)
    console.log(
      [
        label.padEnd(72),
        mib(m.rss).padStart(9),
        mib(m.heapUsed).padStart(9),
        mib(m.arrayBuffers).padStart(9),
        `  ${JSON.stringify(rej)}`,
      ].join(''),
    )
  process.exit(0)
}

if (process.argv.includes('--victim')) await victim()
else {
  setTimeout(() => {
    console.error('bench-hostile-frames: took too long, exiting')
    process.exit(3)
  }, 180_000).unref()
  await main()
}
