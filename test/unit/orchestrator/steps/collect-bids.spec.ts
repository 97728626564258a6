/**
 * The `bidding` step on a simulated clock: the bid window (early close, stragglers, deadline), the
 * re-publish backoff (1 s, 2 s after a window that brought nothing usable), "not now" declines
 * asked again, no subscriber, no approval, funds proofs (and quotes without), and a cancel while it waits. Providers answer through
 * the job's session, as the job's inbox would put their bids and declines there.
 */
import assert from 'node:assert/strict'
import { JobFailure } from '../../../../dms/orchestrator/job-machine.js'
import { collectBidsStep, republishDelayMs } from '../../../../dms/orchestrator/steps/collect-bids.js'
import { handleOf, INBOX } from '../../../../dms/protocol/handles.js'
import { REQUESTER_CAP_REASON, type BidRequest } from '../../../../dms/protocol/messages.js'
import { newParty, type Who } from '../../../helpers/contracts.js'
import { CONFIG, jobRecord, never, outcome, signedBid, stepDeps, T0 } from '../../../helpers/steps.js'

describe('orchestrator/steps/collect-bids', () => {
  const p1 = newParty()
  const p2 = newParty()
  const from = (p: Who) => handleOf(p.peer, INBOX.provider, ['/ip4/127.0.0.1/tcp/4001'])

  it('publishes one bid request and closes its window early once enough bids are in', async () => {
    const f = stepDeps({ config: { ...CONFIG, enoughBids: 2 } })
    f.transport.subscribers = [p1.peer, p2.peer]
    const reliability: Record<string, number> = { [p1.peer]: 0.75, [p2.peer]: 0.25 }
    f.deps.reliability = (peer) => Promise.resolve(reliability[peer])
    f.actor.onPublish = (req: BidRequest) => {
      f.session.addBid(signedBid(p1, req.jobId), from(p1))
      f.session.addBid(signedBid(p2, req.jobId), from(p2))
    }
    const job = jobRecord({ excluded: ['dropped-earlier'] })
    job.spec.providers.deny = ['denied']
    const patch = await collectBidsStep(f.deps)(job, never())

    assert.equal(f.clock.now(), T0, 'closed on the second bid, without waiting')
    const [published] = f.actor.sent
    assert.equal(f.actor.sent.length, 1)
    const req = published.payload as BidRequest
    assert.equal(req.deadline, T0 + CONFIG.bidWindowMs)
    assert.deepEqual(req.exclude, ['denied', 'dropped-earlier'])
    assert.equal(req.approval, f.approval)
    assert.deepEqual(
      patch.bids?.map((b) => b.provider),
      [p1.peer, p2.peer],
    )
    assert.deepEqual(patch.reliability, reliability)
    assert.deepEqual(patch.providerAddrs?.[p1.peer], ['/ip4/127.0.0.1/tcp/4001'])
  })

  it("asks for the job's needs, whole, and never its command, env or working directory", async () => {
    const f = stepDeps()
    f.transport.subscribers = [p1.peer]
    f.actor.onPublish = (req: BidRequest) => f.session.addBid(signedBid(p1, req.jobId), from(p1))
    const job = jobRecord()
    job.spec = {
      ...job.spec,
      command: ['sh', '-c', 'curl -H "$TOKEN" https://example.test'],
      env: { TOKEN: 'sk-live-secret' },
      workdir: '/srv/private',
      network: true,
      resources: { cpu: 1.5, memoryBytes: 96 * 1024 * 1024, diskBytes: 1024, gpus: 2 },
    }
    await collectBidsStep(f.deps)(job, never())
    const req = f.actor.sent[0].payload as BidRequest
    assert.deepEqual(req.workloadNeeds, {
      members: [
        {
          name: 'main',
          artifact: { kind: 'image', ref: 'dms-test:1' },
          network: 'outbound',
          resources: { cpu: 1.5, memoryBytes: 96 * 1024 * 1024, diskBytes: 1024, gpus: { count: 2 } },
        },
      ],
    })
    assert.doesNotMatch(JSON.stringify(req), /sk-live-secret|TOKEN|curl|\/srv\/private/)
  })

  it("asks for a pod's shared disk beside its members' needs (the contract's disk; no member has one)", async () => {
    const f = stepDeps()
    f.transport.subscribers = [p1.peer]
    f.actor.onPublish = (req: BidRequest) => f.session.addBid(signedBid(p1, req.jobId), from(p1))
    const job = jobRecord()
    const member = (name: string) => ({
      name,
      image: 'dms-test:1',
      command: ['true'],
      env: {},
      cpu: 0.5,
      memoryBytes: 64 * 1024 * 1024,
    })
    job.spec = {
      ...job.spec,
      members: [member('a'), member('b')],
      resources: { cpu: 1, memoryBytes: 128 * 1024 * 1024, diskBytes: 16 * 1024 * 1024, gpus: 0 },
    }
    await collectBidsStep(f.deps)(job, never())
    const req = f.actor.sent[0].payload as BidRequest
    assert.deepEqual(
      req.workloadNeeds.members.map((m) => m.name),
      ['a', 'b'],
    )
    assert.equal(req.workloadNeeds.podDiskBytes, 16 * 1024 * 1024)
  })

  it('a window with a bid closes once the stragglers had their time (not at its deadline)', async () => {
    const f = stepDeps()
    f.transport.subscribers = [p1.peer, p2.peer]
    f.actor.onPublish = (req: BidRequest) => f.session.addBid(signedBid(p1, req.jobId), from(p1))
    const done = outcome(collectBidsStep(f.deps)(jobRecord(), never()))
    await f.clock.advanceAsync(f.deps.audience.stragglerMs)
    const { value } = await done
    assert.equal(value?.bids?.length, 1)
    assert.equal(f.actor.of({ name: '/dms/job/bid-request' }).length, 1, 'a bid came: no second request')
  })

  it('a request nobody answers is published again 1 s, then 2 s after its window closed', async () => {
    const f = stepDeps()
    f.transport.subscribers = [p1.peer]
    const done = outcome(collectBidsStep(f.deps)(jobRecord(), never()))
    const window = CONFIG.bidWindowMs
    await f.clock.advanceAsync(3 * window + republishDelayMs(1) + republishDelayMs(2))
    const { value } = await done
    assert.deepEqual(
      f.actor.sent.map((s) => s.at - T0),
      [0, window + 1000, 2 * window + 1000 + 2000],
    )
    assert.deepEqual(value?.bids, [])
    assert.deepEqual(value?.declines, [])
  })

  it('a provider that missed the first request answers the second: no third', async () => {
    const f = stepDeps()
    f.transport.subscribers = [p1.peer]
    f.actor.onPublish = (req: BidRequest) => {
      if (f.actor.sent.length < 2) return // as if the first request was lost
      f.session.addDecline({ jobId: req.jobId, provider: p1.peer, reasons: ['answered the second request'] })
    }
    const done = outcome(collectBidsStep(f.deps)(jobRecord(), never()))
    await f.clock.advanceAsync(CONFIG.bidWindowMs + 1000)
    const { value } = await done
    assert.deepEqual(
      f.actor.sent.map((s) => s.at - T0),
      [0, CONFIG.bidWindowMs + 1000],
    )
    assert.deepEqual(value?.declines?.[0].reasons, ['answered the second request'])
  })

  it('a "not now" decline is asked again and forgotten; the final answer is kept', async () => {
    const f = stepDeps()
    f.transport.subscribers = [p1.peer]
    const answers = [[`${REQUESTER_CAP_REASON} cpu at most 50% per requester`], ['not enough cpu']]
    f.actor.onPublish = (req: BidRequest) =>
      f.session.addDecline({ jobId: req.jobId, provider: p1.peer, reasons: answers.shift() ?? [] })
    const done = outcome(collectBidsStep(f.deps)(jobRecord(), never()))
    await f.clock.advanceAsync(1000)
    const { value } = await done
    assert.equal(f.actor.sent.length, 2, 'the "not now" decline was followed by a second request only')
    assert.deepEqual(
      value?.declines?.map((d) => d.reasons),
      [['not enough cpu']],
    )
  })

  it('no provider subscribed within the bid window: an empty round, nothing published', async () => {
    const f = stepDeps()
    const done = outcome(collectBidsStep(f.deps)(jobRecord(), never()))
    await f.clock.advanceAsync(CONFIG.bidWindowMs)
    const { value } = await done
    assert.deepEqual(value?.bids, [])
    assert.deepEqual(f.actor.sent, [])
  })

  it('funds short of the max price are sent all the same (a cheaper bid may fit); no proof fails NO_FUNDS_PROOF before publishing', async () => {
    const f = stepDeps({ config: { ...CONFIG, enoughBids: 1 } })
    f.transport.subscribers = [p1.peer]
    const short = { ...f.deps.funds.current()!, available: 999_999 }
    f.deps.funds = { current: () => short, proofFor: () => Promise.resolve(short) }
    f.actor.onPublish = (req: BidRequest) => f.session.addBid(signedBid(p1, req.jobId), from(p1))
    await collectBidsStep(f.deps)(jobRecord(), never())
    assert.deepEqual(
      f.actor.sent.map((s) => (s.payload as BidRequest).funds),
      f.actor.sent.map(() => short),
    )
    f.actor.sent.length = 0
    f.deps.funds = { current: () => undefined, proofFor: () => Promise.reject(new Error('unreachable')) }
    const none = await outcome(collectBidsStep(f.deps)(jobRecord(), never()))
    assert.equal((none.error as JobFailure).code, 'NO_FUNDS_PROOF')
    assert.deepEqual(f.actor.sent, [])
  })

  it("carries the funds proof in a job's request; a quote's says quote and needs no funds", async () => {
    const f = stepDeps({ config: { ...CONFIG, enoughBids: 1 } })
    f.transport.subscribers = [p1.peer]
    f.actor.onPublish = (req: BidRequest) => f.session.addBid(signedBid(p1, req.jobId), from(p1))
    await collectBidsStep(f.deps)(jobRecord(), never())
    const job = f.actor.sent[0].payload as BidRequest
    assert.equal(job.funds, f.deps.funds.current())
    assert.equal(job.quote, undefined)
    f.deps.funds = { current: () => undefined, proofFor: () => Promise.reject(new Error('never asked')) }
    await collectBidsStep(f.deps, { quote: true })(jobRecord(), never())
    const quote = f.actor.sent[1].payload as BidRequest
    assert.equal(quote.quote, true)
    assert.equal(quote.funds, undefined)
  })

  it('no approval credential: fails NOT_APPROVED before publishing', async () => {
    const f = stepDeps()
    f.transport.subscribers = [p1.peer]
    f.deps.approval = {
      current: () => undefined,
      ready: () => Promise.reject(new Error('the contract-db has not approved this node')),
    }
    const { error } = await outcome(collectBidsStep(f.deps)(jobRecord(), never()))
    assert.ok(error instanceof JobFailure)
    assert.equal(error.code, 'NOT_APPROVED')
    assert.match(error.message, /not approved/)
    assert.deepEqual(f.actor.sent, [])
  })

  it('a cancel during the backoff ends the step at once with the abort reason', async () => {
    const f = stepDeps()
    f.transport.subscribers = [p1.peer]
    const ac = new AbortController()
    const done = outcome(collectBidsStep(f.deps)(jobRecord(), ac.signal))
    await f.clock.advanceAsync(CONFIG.bidWindowMs + 500) // in the 1 s backoff
    ac.abort(new Error('cancelled'))
    const { error } = await done
    assert.match((error as Error).message, /cancelled/)
    assert.equal(f.actor.sent.length, 1)
    assert.equal(f.clock.pending, 0, 'no timer left armed')
  })

  it('forgets the previous round first (a re-bid after a provider fault)', async () => {
    const f = stepDeps({ config: { ...CONFIG, enoughBids: 1 } })
    f.transport.subscribers = [p2.peer]
    f.session.addBid(signedBid(p1, 'job-1'), from(p1)) // from the round before
    f.actor.onPublish = (req: BidRequest) => f.session.addBid(signedBid(p2, req.jobId), from(p2))
    const patch = await collectBidsStep(f.deps)(jobRecord(), never())
    assert.deepEqual(
      patch.bids?.map((b) => b.provider),
      [p2.peer],
    )
  })
})
