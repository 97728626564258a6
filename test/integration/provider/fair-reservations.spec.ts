/**
 * Reservations cost something or end quickly (issue 29, items 4 and 7), with real nodes on
 * 127.0.0.1 and a real contract-db: a requester without funds for a job's max price reserves
 * nothing; a peer approved without the requester role reserves nothing; a requester asking for a
 * whole offer again and again without locking does not make another requester's fail-fast jobs
 * fail NO_BIDS; nor does a requester quoting in a loop. A test executor stands in for Docker.
 */
import assert from 'node:assert/strict'
import { W } from '../../../dms/protocol/behaviours.js'
import { parseJobSpec } from '../../../dms/orchestrator/job-spec.js'
import { CountingExecutor } from '../../helpers/counting-executor.js'
import { jobReaches, startNetwork, TEST_IMAGE, type TestNetwork } from '../../helpers/network.js'
import type { TestPeer } from '../../helpers/peers.js'
import { approvedRogueRequester, bidRequest, ignoredRequests } from '../../helpers/rogue.js'

const MiB = 1024 * 1024

describe('provider: fair reservations', function () {
  this.timeout(120_000)
  let net: TestNetwork
  let rogue: TestPeer | undefined
  const executor = new CountingExecutor()

  const setUp = async (opts: { fund?: number } = {}) => {
    net = await startNetwork([{ cpu: 1, memoryBytes: 512 * MiB, perCpuHour: 1000 }], {
      components: { executor },
      ...opts,
    })
  }
  afterEach(async () => {
    await rogue?.stop()
    rogue = undefined
    await net?.stop()
  })

  const spec = (cpu: number) =>
    parseJobSpec({
      image: TEST_IMAGE,
      command: ['true'],
      resources: { cpu, memory: '64MiB' },
      maxDuration: 60,
      maxPrice: 100_000,
    })

  /** Posts `n` jobs one after the other (each fail-fast: no queue timeout); their end states. */
  const postInTurn = async (n: number, cpu: number) => {
    const ends: string[] = []
    for (let i = 0; i < n; i++) {
      const posted = await net.requester.orchestrator!.post(spec(cpu))
      const job = await jobReaches(net.requester, posted.record.id)
      ends.push(job.state === 'completed' ? 'completed' : `${job.state} ${job.record.error?.code}`)
    }
    return ends
  }

  it('a peer with no money reserves nothing: its bid requests are declined, its own jobs fail NO_BIDS saying why', async () => {
    await setUp({ fund: 0 })
    const provider = net.providers[0]
    const a = await approvedRogueRequester(net, { fund: 0 })
    rogue = a.rogue
    assert.equal(a.funds?.available, 0, 'the contract-db proves a zero balance')
    // The whole offer, asked for with its proof of nothing, and with no proof at all; gossip and direct.
    await a.r.publish(bidRequest('hold-all-1', 1, a.approval, a.funds))
    await a.r.actor.send(a.to, W.directBidRequest, bidRequest('hold-all-2', 1, a.approval, a.funds))
    await a.r.actor.send(a.to, W.directBidRequest, bidRequest('hold-all-3', 1, a.approval))
    await a.r.answered(3)
    assert.deepEqual(
      a.r.answers.map((x) => [x.kind, x.reasons?.[0].replace(/ \d+ available.*/, '')]),
      [
        ['decline', 'funds: funds_short'],
        ['decline', 'funds: funds_short'],
        ['decline', 'funds: no_funds_proof'],
      ],
    )
    assert.deepEqual(provider.ledger!.entries(), [], 'nothing reserved')

    // A requester node without money: every provider declines it for funds, nothing is reserved.
    const posted = await net.requester.orchestrator!.post(spec(0.5))
    const job = await jobReaches(net.requester, posted.record.id)
    assert.equal(job.state, 'failed')
    assert.equal(job.record.error?.code, 'NO_BIDS', job.record.error?.message)
    assert.match(job.record.error.message, /funds_short 0 available, this provider's bid would lock \d+/)
    assert.ok(provider.provider!.declines.funds > 3, 'its requests were declined for funds')
    assert.deepEqual(provider.ledger!.entries(), [])

    // Credited, it is served (its proof is asked again: the job's max price is over the proven 0).
    await net.contractDb.service.credit(net.requester.peerId, 1_000_000)
    assert.deepEqual(await postInTurn(1, 0.5), ['completed'])
  })

  it('a peer approved as a provider only reserves nothing, on gossip or directly', async () => {
    await setUp()
    const provider = net.providers[0]
    const a = await approvedRogueRequester(net, { roles: ['provider'] })
    rogue = a.rogue
    const ignored = ignoredRequests(provider.provider!, 2)
    await a.r.publish(bidRequest('hold-all-1', 1, a.approval, a.funds))
    await a.r.actor.send(a.to, W.directBidRequest, bidRequest('hold-all-2', 1, a.approval, a.funds))
    await Promise.race([ignored, a.r.answered(1)])
    assert.deepEqual(a.r.answers, [], 'no answer')
    assert.equal(provider.provider!.bidRequestsIgnored.approval_role, 2)
    assert.deepEqual(provider.ledger!.entries(), [])
    assert.deepEqual(await postInTurn(1, 1), ['completed'])
  })

  it("whole-offer direct requests every 2 s, never locked, do not fail another requester's fail-fast jobs", async () => {
    await setUp()
    const a = await approvedRogueRequester(net)
    rogue = a.rogue
    let n = 0
    const ask = () =>
      void a.r.actor
        .send(a.to, W.directBidRequest, bidRequest(`hold-all-${n++}`, 1, a.approval, a.funds))
        .catch(() => undefined)
    ask()
    await a.r.answered(1)
    assert.equal(a.r.answers[0].kind, 'bid', 'it holds the whole offer')
    const timer = setInterval(ask, 2000)
    try {
      assert.deepEqual(await postInTurn(3, 0.5), ['completed', 'completed', 'completed'])
    } finally {
      clearInterval(timer)
    }
  })

  it("a requester quoting the whole offer in a loop does not starve another requester's jobs", async () => {
    await setUp()
    const quoter = await net.addRequester('quoter', { bidWindowMs: 1000 })
    let quoting = true
    let quotes = 0
    const loop = async () => {
      while (quoting) {
        const q = await quoter.orchestrator!.quote(spec(1)).catch(() => undefined)
        if (q !== undefined && q.bids.length > 0) quotes++
      }
    }
    // Three loops at once: the offer is quoted all the time.
    const loops = [loop(), loop(), loop()]
    try {
      assert.deepEqual(await postInTurn(4, 1), ['completed', 'completed', 'completed', 'completed'])
    } finally {
      quoting = false
      await Promise.all(loops)
    }
    assert.ok(quotes > 0, 'the quotes were answered meanwhile')
  })
})
