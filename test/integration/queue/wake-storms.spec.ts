/**
 * Wake-ups follow real capacity (issue 29, item 6), on real nodes on 127.0.0.1 (a test executor
 * holds the one provider busy, so every job posted after the first waits in `queued`; the backoff
 * is ten minutes, so only news and joins can wake them). An approved peer announcing 1000 free
 * cores about twice a second and never bidding costs no more than twice the bid rounds of a quiet
 * queue (before: every announcement woke the whole queue); a stranger flapping its bid-topic
 * subscription wakes nothing (before: each join woke up to 32 jobs).
 */
import assert from 'node:assert/strict'
import type { Message } from '@libp2p/gossipsub'
import type { DmsNode } from '../../../dms/node.js'
import { NEWS_MIN_GAP_MS } from '../../../dms/orchestrator/capacity-news-gate.js'
import { parseJobSpec } from '../../../dms/orchestrator/job-spec.js'
import type { StoredJob } from '../../../dms/orchestrator/orchestrator.js'
import { W } from '../../../dms/protocol/behaviours.js'
import { BID_REQUEST_TOPIC, CAPACITY_TOPIC } from '../../../dms/protocol/handles.js'
import type { CapacityNews } from '../../../dms/protocol/messages.js'
import { CountingExecutor } from '../../helpers/counting-executor.js'
import { jobReaches, startNetwork, TEST_IMAGE, type TestNetwork } from '../../helpers/network.js'
import { startPeer, type TestPeer } from '../../helpers/peers.js'

const MiB = 1024 * 1024
/** Queued jobs. */
const Q = 12
/** The liar's announcements, and the time between R taking one and the next leaving. */
const LIES = 10
const LIE_GAP_MS = NEWS_MIN_GAP_MS + 50
const FLAPS = 6

const spec = () =>
  parseJobSpec({
    image: TEST_IMAGE,
    command: ['true'],
    resources: { cpu: 1, memory: '64MiB' },
    maxDuration: 60,
    maxPrice: 100_000,
    queueTimeout: 600,
  })

/** Resolves once `check` holds, tested at each job change of `node` and right after it. */
function untilJobs(node: DmsNode, check: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    const test = () => {
      if (!check()) return
      off()
      resolve()
    }
    const off = node.orchestrator!.onChange(() => setImmediate(test))
    test()
  })
}

/** Resolves once `check` holds, tested at each gossip message, subscription change and heartbeat of `node`. */
function untilGossip(node: DmsNode, check: () => boolean): Promise<void> {
  const pubsub = node.host.services.pubsub
  const events = ['message', 'subscription-change', 'gossipsub:heartbeat'] as const
  return new Promise((resolve) => {
    const test = () => {
      if (!check()) return
      for (const e of events) pubsub.removeEventListener(e as 'message', test)
      resolve()
    }
    for (const e of events) pubsub.addEventListener(e as 'message', test)
    test()
  })
}

describe('wake-ups follow real capacity', function () {
  this.timeout(120_000)
  let net: TestNetwork
  let open!: () => void
  const executor = new CountingExecutor()
  const peers: TestPeer[] = []
  let queued: string[] = []
  /** Bid rounds of the queue before anyone lies. */
  let quiet = 0

  /** Bid rounds the queued jobs have made so far that found no usable bid. */
  const rounds = async (): Promise<number> => {
    const jobs = await Promise.all(queued.map((id) => net.requester.orchestrator!.get(id)))
    return jobs.reduce((n, j) => n + ((j as StoredJob).record.queue?.rounds ?? 0), 0)
  }
  /** Every queued job is waiting on the board again (its round over). */
  const allWaiting = () => untilJobs(net.requester, () => net.requester.orchestrator!.capacity.size === Q)

  before(async () => {
    net = await startNetwork([{ cpu: 1, memoryBytes: 512 * MiB, perCpuHour: 1000 }], {
      components: { executor },
      requester: { bidWindowMs: 500, queueRetryMinMs: 600_000, queueRetryMaxMs: 600_000 },
    })
    executor.gate = new Promise<void>((r) => (open = r))
    const orch = net.requester.orchestrator!
    const first = await orch.post(spec())
    await jobReaches(net.requester, first.record.id, ['running'])
    const posted = await Promise.all(Array.from({ length: Q }, () => orch.post(spec())))
    queued = posted.map((p) => p.record.id)
    await allWaiting()
    // A quiet queue: one round each (one more for a job the provider's own news may have woken
    // before its first job took the core), then nothing for ten minutes.
    quiet = await rounds()
    assert.ok(quiet >= Q && quiet <= Q + 1, `${quiet}`)
  })
  after(async () => {
    open?.()
    for (const p of peers) await p.stop()
    await net?.stop()
  })

  it('an approved peer announcing 1000 free cores and never bidding: bid rounds stay within 2x of a quiet queue', async () => {
    const r = net.requester
    const liar = await startPeer([r.addrs()[0]])
    peers.push(liar)
    await liar.transport.waitForTopicPeers(CAPACITY_TOPIC, 1)
    await net.contractDb.service.approve(liar.system.peerId)
    const approval = await net.contractDb.service.approvalFor(liar.system.peerId)
    const actor = liar.system.spawn('capacity', liar.key)
    // Each announcement goes out a little over NEWS_MIN_GAP_MS after R took the last one, so none
    // is over the gate's rate however the network delays them.
    let heard = 0
    const pubsub = r.host.services.pubsub
    const onMessage = ({ detail: m }: CustomEvent<Message>) => {
      if (m.topic === CAPACITY_TOPIC && m.type === 'signed' && m.from.toString() === liar.system.peerId)
        heard++
    }
    pubsub.addEventListener('message', onMessage)
    for (let i = 0; i < LIES; i++) {
      // A different figure each time: not the same news again.
      const news: CapacityNews = {
        provider: liar.system.peerId,
        free: { cpu: 1000 - i, memoryBytes: 1024 * 1024 * MiB, diskBytes: 1024 * 1024 * MiB, gpus: 0 },
        at: Date.now(),
        approval,
      }
      await actor.publish(CAPACITY_TOPIC, W.capacityNews, news, 60_000)
      await untilGossip(r, () => heard > i)
      await new Promise((resolve) => setTimeout(resolve, LIE_GAP_MS))
    }
    pubsub.removeEventListener('message', onMessage)
    await allWaiting()

    // Delivered: past the gate (the provider's own news counts in the listener's `kept` too: the
    // liar's joining the topic makes it announce).
    assert.equal(heard, LIES, 'every announcement got through the gate')
    const total = await rounds()
    assert.ok(total <= 2 * quiet, `${total} bid rounds for ${Q} queued jobs, a quiet queue makes ${quiet}`)
    assert.ok(total > quiet, 'its first announcement woke some, on credit')
    assert.ok((r.orchestrator!.capacity.unheeded.no_credit ?? 0) > 0, 'then its news woke nothing')
  })

  it('a stranger flapping its bid-topic subscription wakes nothing', async () => {
    const r = net.requester
    const orch = r.orchestrator!
    const before = { rounds: await rounds(), joins: orch.joins.joins, woken: orch.joins.woken }
    const stranger = await startPeer([r.addrs()[0]])
    peers.push(stranger)
    const pubsub = stranger.host.services.pubsub
    const id = stranger.system.peerId
    for (let i = 1; i <= FLAPS; i++) {
      pubsub.subscribe(BID_REQUEST_TOPIC)
      await untilGossip(r, () => orch.joins.joins >= before.joins + i)
      pubsub.unsubscribe(BID_REQUEST_TOPIC)
      await untilGossip(r, () => !r.transport.topicSubscribers(BID_REQUEST_TOPIC).includes(id))
    }
    await allWaiting()

    assert.equal(orch.joins.woken - before.woken, 0, 'no job woken by its joins')
    assert.equal(await rounds(), before.rounds, 'no bid round')
    assert.equal(orch.joins.joins - before.joins, FLAPS, 'every join was seen')
    assert.equal(orch.joins.strangers, FLAPS)
  })
})
