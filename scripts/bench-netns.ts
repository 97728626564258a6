/**
 * Figures for a provider behind NAT (root; network namespaces, real Docker, the built CLI):
 * - start to first bid: from the provider's process start until it is in the requester's bid
 *   mesh (found through the DHT, reached through the relay), and until its first bid;
 * - a job's latency (post to finished) and the ping round trip, through the relay and direct
 *   (after the DCUtR upgrade).
 *   npm run build && node --import tsx --import ./actors/polyfill.ts scripts/bench-netns.ts [jobs=3]
 */
import { loadavg } from 'node:os'
import { netnsUnavailable } from './netns.js'
import { startNetnsDevnet, type NetnsDevnet } from './netns-devnet.js'

const JOBS = Number(process.argv[2] ?? 3)
const job = {
  name: 'bench',
  image: process.env.DMS_TEST_IMAGE ?? 'dms-test:1',
  command: ['sh', '-c', 'echo bench'],
  resources: { cpu: 0.5, memory: '64MiB' },
  maxDuration: 60,
  maxPrice: 10_000,
}

interface Peer {
  peerId: string
  bidTopic?: boolean
  connection?: string
  latencyMs?: number
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Polls the requester's peers until `test` holds for the provider (a benchmark may poll). */
async function until(net: NetnsDevnet, test: (p: Peer) => boolean): Promise<Peer> {
  for (;;) {
    const { peers } = await net.api.ok<{ peers: Peer[] }>('GET', '/v1/peers')
    const p = peers.find((x) => x.peerId === net.provider.peerId)
    if (p !== undefined && test(p)) return p
    await sleep(50)
  }
}

async function jobs(net: NetnsDevnet, label: string): Promise<void> {
  const times: number[] = []
  for (let i = 0; i < JOBS; i++) {
    const t0 = performance.now()
    const { id } = await net.api.ok<{ id: string }>('POST', '/v1/jobs', job)
    const done = await net.requester.logLine((l) => l.msg === 'job finished' && l.jobId === id)
    if (done.state !== 'completed') throw new Error(`${label} job ${id}: ${JSON.stringify(done.error)}`)
    times.push(performance.now() - t0)
  }
  const peer = await until(net, () => true)
  times.sort((a, b) => a - b)
  console.log(
    `${label.padEnd(8)} jobs ${JOBS}: post→finished median ${times[Math.floor(JOBS / 2)].toFixed(0)} ms (min ${times[0].toFixed(0)}, max ${times[JOBS - 1].toFixed(0)}); ping rtt ${peer.latencyMs ?? '?'} ms; connection ${peer.connection}`,
  )
}

const why = await netnsUnavailable()
if (why !== undefined) {
  console.log(`bench-netns: skipped (${why})`)
  process.exit(0)
}
console.log(
  `load average before: ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}`,
)
const net = await startNetnsDevnet({ holePunching: false })
try {
  // Start to first bid, relayed: the provider restarted; the requester knows only the relay.
  const bidSent = () => net.provider.logLine((l) => l.msg === 'bid sent')
  const t0 = performance.now()
  await net.restartProvider({ holePunching: false })
  const ready = performance.now()
  await until(net, (p) => p.bidTopic === true)
  const meshed = performance.now()
  const bid = bidSent()
  await net.api.ok('POST', '/v1/jobs', job)
  await bid
  const firstBid = performance.now()
  console.log(
    `NATed provider: process start → ready ${(ready - t0).toFixed(0)} ms → in the requester's bid mesh (relayed) ${(meshed - t0).toFixed(0)} ms → first bid (job posted then) ${(firstBid - t0).toFixed(0)} ms`,
  )
  await net.requester.logLine((l) => l.msg === 'job finished')
  await jobs(net, 'relayed')
  await net.restartProvider({ holePunching: true })
  await until(net, (p) => p.connection === 'direct' && p.bidTopic === true)
  await jobs(net, 'direct')
} finally {
  await net.stop()
}
console.log(
  `load average after: ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}`,
)
