/**
 * The measuring core of scripts/bench-market.ts, shared by its two networks (every node in one
 * process, or the providers in host processes: bench-market-procs.ts): the job each run posts,
 * the counters read around a series of jobs, and one row per requester mode.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import type { ActorSystem } from '../actors/system.js'
import type { DmsNode } from '../dms/node.js'
import { parseJobSpec } from '../dms/orchestrator/job-spec.js'
import { W } from '../dms/protocol/behaviours.js'
import { BID_REQUEST_TOPIC } from '../dms/protocol/handles.js'
import type { JobUpdate } from '../dms/protocol/messages.js'
import type { Sends } from './bench-market-probes.js'
import { jobReaches, TEST_IMAGE } from '../test/helpers/network.js'

/** `enoughBids` of every requester: a bid round ends early once this many bids came. */
export const ENOUGH_BIDS = 3

const spec = parseJobSpec({
  image: TEST_IMAGE,
  command: ['true'],
  resources: { cpu: 0.1, memory: '16MiB' },
  maxDuration: 60,
  maxPrice: 1_000_000,
})

const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
export const r1 = (x: number) => Math.round(x * 10) / 10

export interface Counters {
  cpuMs: number
  delivered: number
  bidAnswers: number
  sent: number
}

export function read(nodes: Array<{ system: ActorSystem }>, sends: Sends): Counters {
  const u = process.cpuUsage()
  return {
    cpuMs: (u.user + u.system) / 1000,
    delivered: nodes.reduce((s, n) => s + n.system.metrics().delivered, 0),
    bidAnswers: sends.get(W.bid.name) + sends.get(W.decline.name),
    sent: Object.values(sends.byBehaviour).reduce((a, b) => a + b, 0),
  }
}

/** Posts one job on `node` and waits for it to end: ms from post to the provider's `running`, and in `bidding`. */
async function oneJob(node: DmsNode): Promise<{ toRunning: number; bidding: number }> {
  const orch = node.orchestrator!
  const t0 = Date.now()
  let runningAt = NaN
  const off = orch.onUpdate((_id, u: JobUpdate) => {
    if (u.state === 'running' && Number.isNaN(runningAt)) runningAt = u.at
  })
  const posted = await orch.post(spec)
  const job = await jobReaches(node, posted.record.id)
  off()
  if (job.state !== 'completed') throw new Error(`job ${job.state}: ${JSON.stringify(job.record.error)}`)
  const h = job.record.history
  const b = h.findIndex((x) => x.state === 'bidding')
  return { toRunning: runningAt - t0, bidding: b >= 0 && b + 1 < h.length ? h[b + 1].at - h[b].at : NaN }
}

export interface Row {
  providers: number
  /** Processes the nodes ran in (1: all in this one). */
  procs: number
  mode: 'everyone (bidSample 0)' | 'sample (default)'
  jobs: number
  failed: number
  bidAnswersPerJob: number
  deliveredPerJob: number
  sentPerJob: number
  cpuMsPerJob: number
  idleCpuMsPerJob: number
  postToRunningP50: number
  /** ms in the job's `bidding` state. */
  biddingP50: number
}

export type Modes = ReadonlyArray<readonly [Row['mode'], DmsNode]>

/** Idle CPU of the whole network (gossip heartbeats, pings) per ms, to set against each job's. */
async function idleCpuPerMs(counters: () => Promise<Counters>): Promise<number> {
  const idle0 = await counters()
  const wall0 = Date.now()
  await sleep(3000)
  return ((await counters()).cpuMs - idle0.cpuMs) / (Date.now() - wall0)
}

/** `jobs` sequential jobs through each mode's requester, with the counters read around them. */
export async function measure(
  providers: number,
  modes: Modes,
  counters: () => Promise<Counters>,
  procs: number,
  jobs: number,
): Promise<Row[]> {
  const idlePerMs = await idleCpuPerMs(counters)
  const rows: Row[] = []
  for (const [mode, node] of modes) {
    // Every provider subscribed as this requester sees it (connections may have been re-dialled).
    await node.transport.waitForTopicPeers(BID_REQUEST_TOPIC, providers, {
      signal: AbortSignal.timeout(60_000),
    })
    // Warm-up (connections, image check caches); a failed one is tried again, and said.
    for (let tries = 1; ; tries++) {
      const ok = await oneJob(node).then(
        () => true,
        (err: unknown) => {
          const live = node.transport.topicSubscribers(BID_REQUEST_TOPIC).length
          console.error(
            `${providers} providers, ${mode}, warm-up: ${(err as Error).message}; ${live} live now`,
          )
          return false
        },
      )
      if (ok || tries === 3) break
    }
    const before = await counters()
    const wall0 = Date.now()
    const toRunning: number[] = []
    const bidding: number[] = []
    let failed = 0
    for (let i = 0; i < jobs; i++) {
      try {
        const t = await oneJob(node)
        toRunning.push(t.toRunning)
        bidding.push(t.bidding)
      } catch (err) {
        // Counted, not hidden: e.g. NO_BIDS when the requester's providers were all disconnected.
        failed++
        console.error(`${providers} providers, ${mode}: ${(err as Error).message}`)
        await node.transport.waitForTopicPeers(BID_REQUEST_TOPIC, providers, {
          signal: AbortSignal.timeout(60_000),
        })
      }
    }
    const after = await counters()
    const wall = Date.now() - wall0
    rows.push({
      providers,
      procs,
      mode,
      jobs,
      failed,
      bidAnswersPerJob: r1((after.bidAnswers - before.bidAnswers) / jobs),
      deliveredPerJob: r1((after.delivered - before.delivered) / jobs),
      sentPerJob: after.sent < 0 ? -1 : r1((after.sent - before.sent) / jobs),
      cpuMsPerJob: r1((after.cpuMs - before.cpuMs) / jobs),
      idleCpuMsPerJob: r1((idlePerMs * wall) / jobs),
      postToRunningP50: p50(toRunning),
      biddingP50: p50(bidding),
    })
  }
  return rows
}
