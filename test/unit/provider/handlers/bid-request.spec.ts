/**
 * The bid-request handler on a ManualClock over a real ledger and bid book (fake runs): admission,
 * the reservation with its machine, the same bid again for a re-published
 * request, the per-requester cap and the takeover of reservations held over it, funds proofs,
 * quotes that reserve nothing, the requester role, and a bid that cannot be delivered.
 */
import assert from 'node:assert/strict'
import { waitFor } from 'xstate'
import { flatState } from '../../../../dms/provider/bid-store.js'
import { jobRequestHandler } from '../../../../dms/provider/handlers/job-request.js'
import { issueApproval } from '../../../../dms/contracts/approval.js'
import { lockDirect } from '../../../helpers/ledger.js'
import { Harness } from '../../../helpers/provider-harness.js'
import { podNeeds } from '../../../helpers/needs.js'

describe('provider/handlers/bid-request', () => {
  let h: Harness
  beforeEach(async () => {
    h = await new Harness().start()
  })
  afterEach(() => h.close())

  it('reserves for an approved requester, signs the bid and starts its machine in reserved', async () => {
    const bid = await h.bid('job-1', 0.5)
    assert.equal(bid.provider, h.provider.peer)
    assert.equal(bid.expiresAt, h.clock.now() + 30_000)
    assert.deepEqual(
      h.ledger.entries().map((e) => [e.id, e.state, e.resources.cpu]),
      [[bid.bidId, 'reserved', 0.5]],
    )
    const actor = h.book.actor(bid.bidId)!
    assert.equal(flatState(actor.getSnapshot().value), 'reserved')
    const stored = await h.book.get(bid.bidId)
    assert.equal(stored?.state, 'reserved', 'stored before the bid was sent')
  })

  it('answers a re-published request with the same bid, reserving nothing more', async () => {
    const first = await h.bid('job-1', 0.5)
    await h.bidRequest()(h.msg(h.request('job-1', 0.5)))
    assert.deepEqual(
      h.bids().map((b) => b.bidId),
      [first.bidId, first.bidId],
    )
    assert.equal(h.ledger.entries().length, 1)
    // Once expired, a new round gets a new bid.
    await h.clock.advanceAsync(30_000)
    await h.bidRequest()(h.msg(h.request('job-1', 0.5)))
    assert.notEqual(h.bids()[2].bidId, first.bidId)
  })

  it('drops a request without a valid credential, reserving nothing', async () => {
    const { approval: _, ...unapproved } = h.request('job-1')
    await h.bidRequest()(h.msg(unapproved))
    await h.bidRequest()(h.msg(h.request('job-2', 0.5, h.stranger)))
    assert.deepEqual(h.counts.ignored, { no_approval: 1, approval_other_peer: 1 })
    assert.deepEqual(h.sent, [])
    assert.deepEqual(h.ledger.entries(), [])
  })

  it('bids for a pod it can run, and declines one whose member wants the network here, naming the member', async () => {
    const pod = (jobId: string, network?: boolean) => ({
      ...h.request(jobId, 0.4),
      workloadNeeds: podNeeds(
        [
          { name: 'a', image: 'dms-test:1' },
          { name: 'b', image: 'dms-test:1', network },
        ],
        { cpu: 0.2, memoryBytes: 32 * 1024 * 1024 },
      ),
    })
    await h.bidRequest()(h.msg(pod('pod-1')))
    assert.equal(h.bids().find((b) => b.jobId === 'pod-1')?.image, 'dms-test:1')
    assert.deepEqual(
      h.book.openBid('pod-1', h.requester.peer) !== undefined,
      true,
      'the bid is kept with the request it answered',
    )
    await h.bidRequest()(h.msg(pod('pod-2', true)))
    const decline = h.sent.at(-1)!
    assert.equal(decline.behaviour, '/dms/job/decline')
    assert.deepEqual((decline.payload as { reasons: string[] }).reasons, [
      'network not allowed here: member b asks for network access',
    ])
    assert.equal(h.counts.declines['network not allowed'], 1)
    // A malformed pod (a name twice) is not even declined: ignored at the door.
    const sent = h.sent.length
    const [a] = pod('pod-3').workloadNeeds.members
    await h.bidRequest()(h.msg({ ...pod('pod-3'), workloadNeeds: { members: [a, a] } }))
    assert.equal(h.sent.length, sent)
  })

  it("judges every member's image of a pod: a bad one is declined alone, a missing one named", async () => {
    const pod = (jobId: string, second: string) => ({
      ...h.request(jobId, 0.4),
      workloadNeeds: podNeeds(
        [
          { name: 'a', image: 'dms-test:1' },
          { name: 'b', image: second },
        ],
        { cpu: 0.2, memoryBytes: 32 * 1024 * 1024 },
      ),
    })
    const images = {
      refusal: (image: string) =>
        image.includes('//') ? `invalid image: ${image} has an empty component` : undefined,
      canRun: (image: string) => Promise.resolve(image !== 'missing:1'),
    }
    const reasons = () => (h.sent.at(-1)!.payload as { reasons: string[] }).reasons
    await h.bidRequest({ images })(h.msg(pod('pod-1', 'a//b')))
    assert.deepEqual(reasons(), ['invalid image: a//b has an empty component'])
    await h.bidRequest({ images })(h.msg(pod('pod-2', 'missing:1')))
    assert.deepEqual(reasons(), ['image missing:1 is not available on this provider'])
    assert.deepEqual(h.ledger.entries(), [], 'nothing reserved')
  })

  it('declines needs whose artifact is a bundle, which no engine here runs, and reserves nothing', async () => {
    const req = h.request('bundle-1', 0.4)
    const [m] = req.workloadNeeds.members
    const bundle = { ...m, artifact: { kind: 'bundle' as const, sha256: 'ab'.repeat(32) } }
    await h.bidRequest()(h.msg({ ...req, workloadNeeds: { members: [bundle] } }))
    assert.deepEqual((h.sent.at(-1)!.payload as { reasons: string[] }).reasons, [
      'no engine here runs a bundle',
    ])
    assert.equal(h.bids().length, 0)
    assert.deepEqual(h.ledger.entries(), [])
  })

  it('declines a requester over its cap of the offer ("not now")', async () => {
    await h.bid('job-1', 0.4)
    await h.bidRequest()(h.msg(h.request('job-2', 0.4)))
    const decline = h.sent.at(-1)!
    assert.equal(decline.behaviour, '/dms/job/decline')
    assert.match(
      (decline.payload as { reasons: string[] }).reasons[0],
      /^requester cap: cpu reserved for this requester would be 0\.8 of 1 offered, at most 50% per requester$/,
    )
    assert.equal(h.counts.declines['requester cap'], 1)
  })

  it('counts locked and contracted bids in the cap, not only reservations', async () => {
    const lock = jobRequestHandler({ book: h.book })
    const locked = []
    for (const jobId of ['job-1', 'job-2']) {
      const bid = await h.bid(jobId, 0.25)
      await lock(h.msg({ jobId, bidId: bid.bidId }))
      locked.push(h.book.actor(bid.bidId)!)
    }
    assert.equal(h.ledger.summary().locked.cpu, 0.5)
    await h.bidRequest()(h.msg(h.request('job-3', 0.25)))
    assert.match(
      (h.sent.at(-1)!.payload as { reasons: string[] }).reasons[0],
      /^requester cap: cpu .* 0\.75 of 1/,
    )
    // Another requester is not held back by it.
    await h.bid('job-4', 0.25, h.stranger)
    // Once the locks lapse (no contract came), the requester may bid again.
    await h.clock.advanceAsync(15_000)
    await Promise.all(locked.map((a) => waitFor(a, (snap) => snap.status === 'done')))
    assert.equal(h.ledger.summary().locked.cpu, 0)
    await h.bid('job-5', 0.25)
  })

  it('busy: bids its earliest slot and reserves it with laterBids, declines without', async () => {
    const now = h.clock.now()
    const runs = { cpu: 0.75, memoryBytes: 0, diskBytes: 0, gpus: 0 }
    await lockDirect(h.ledger, 'run', 'job-0', runs, { until: now + 60_000 })
    await h.ledger.allocate('run')
    await h.bidRequest()(h.msg(h.request('job-1', 0.5)))
    assert.match((h.sent.at(-1)!.payload as { reasons: string[] }).reasons[0], /^not enough cpu/)

    const later = { enabled: true, maxStartAheadMs: 600_000 }
    const slots = { lockTtlMs: 60_000, provisionTimeoutMs: 300_000, later }
    await h.bidRequest({ slots })(h.msg(h.request('job-2', 0.5)))
    const [bid] = h.bids()
    assert.equal(bid.earliestStart, now + 60_000, 'when the running allocation ends')
    assert.equal(bid.expectedFinish, now + 60_000 + 60_000)
    const entry = h.ledger.entries().find((e) => e.id === bid.bidId)!
    assert.equal(entry.start, now + 60_000)
    assert.equal(
      entry.until,
      now + 60_000 + 60_000 + 300_000 + 60_000 + 60_000,
      'lock, provision, run, publish',
    )
    assert.equal(h.ledger.canStart(bid.bidId), false)

    // Further ahead than maxStartAhead: declined.
    await h.bidRequest({ slots: { ...slots, later: { ...later, maxStartAheadMs: 30_000 } } })(
      h.msg(h.request('job-3', 0.5)),
    )
    assert.match((h.sent.at(-1)!.payload as { reasons: string[] }).reasons[0], /^not enough cpu/)
  })

  it('declines a job its requester has no funds proof for, or too little for its bid, reserving nothing', async () => {
    const reasons = () => (h.sent.at(-1)!.payload as { reasons: string[] }).reasons
    const { funds: _, ...unfunded } = h.request('job-1')
    await h.bidRequest()(h.msg(unfunded))
    assert.deepEqual(reasons(), ['funds: no_funds_proof'])
    await h.bidRequest()(h.msg({ ...h.request('job-2'), funds: h.funds(h.requester, 0) }))
    assert.match(reasons()[0], /^funds: funds_short 0 available, this provider's bid would lock \d+$/)
    const total = Number(/lock (\d+)/.exec(reasons()[0])![1])
    assert.ok(total > 0 && total < 1_000_000, 'the bid, less than the max price')
    // Another peer's proof, or one signed by someone else, is no proof of this requester's funds.
    await h.bidRequest()(h.msg({ ...h.request('job-3'), funds: h.funds(h.stranger) }))
    assert.deepEqual(reasons(), ['funds: funds_other_peer'])
    const forged = { ...h.funds(h.requester), available: 2_000_000_000 }
    await h.bidRequest()(h.msg({ ...h.request('job-4'), funds: forged }))
    assert.deepEqual(reasons(), ['funds: funds_forged'])
    assert.equal(h.counts.declines.funds, 4)
    assert.deepEqual(h.ledger.entries(), [])
    assert.deepEqual(h.bids(), [])
    // Short of the max price (a ceiling) but enough for this provider's bid: it bids.
    await h.bidRequest()(h.msg({ ...h.request('job-5'), funds: h.funds(h.requester, total) }))
    assert.equal(h.bids().length, 1)
  })

  it('answers a quote with a bid that reserved nothing, without funds and outside the cap', async () => {
    await h.bid('job-1', 0.5)
    const { funds: _, ...unfunded } = h.request('quote-1', 0.5)
    await h.bidRequest()(h.msg({ ...unfunded, quote: true }))
    const quoted = h.bids().find((b) => b.jobId === 'quote-1')!
    assert.equal(quoted.resourcesReserved, false)
    assert.equal(h.ledger.entries().length, 1, 'only the job reserved')
    assert.equal(h.book.actor(quoted.bidId), undefined, 'no machine for a quote')
  })

  it("takes over another requester's unlocked reservation held over its share, never one within it", async () => {
    // The stranger holds nothing: it may reserve the whole offer (1 cpu), over its share (50 %).
    const whole = await h.bid('hold-all', 1, h.stranger)
    await h.bid('job-1', 0.5)
    assert.equal((await h.book.get(whole.bidId))?.state, 'released', 'preempted')
    assert.deepEqual(
      h.ledger.entries().map((e) => [e.jobId, e.resources.cpu]),
      [['job-1', 0.5]],
    )
    // Within its share, the requester's reservation stays: the stranger's next ask is declined.
    await h.bidRequest()(h.msg(h.request('hold-all-2', 1, h.stranger), h.stranger))
    assert.match((h.sent.at(-1)!.payload as { reasons: string[] }).reasons[0], /^not enough cpu/)
    // A request over its own share takes nothing over either.
    await h.bidRequest()(h.msg(h.request('job-2', 0.5, h.stranger), h.stranger))
    await h.bidRequest()(h.msg(h.request('job-3', 1)))
    assert.match(
      (h.sent.at(-1)!.payload as { reasons: string[] }).reasons[0],
      /^requester cap|^not enough cpu/,
    )
    assert.deepEqual(
      h.ledger
        .entries()
        .map((e) => e.jobId)
        .sort(),
      ['job-1', 'job-2'],
    )
  })

  it('a locked reservation over the share is not taken over', async () => {
    const whole = await h.bid('hold-all', 1, h.stranger)
    await jobRequestHandler({ book: h.book })(h.msg({ jobId: 'hold-all', bidId: whole.bidId }, h.stranger))
    await h.bidRequest()(h.msg(h.request('job-1', 0.5)))
    assert.match((h.sent.at(-1)!.payload as { reasons: string[] }).reasons[0], /^not enough cpu/)
    assert.equal(h.ledger.summary().locked.cpu, 1)
  })

  it('drops the request of a peer approved without the requester role', async () => {
    const providerOnly = issueApproval(h.contractDb.key, {
      peer: h.requester.peer,
      contractDb: h.contractDb.peer,
      now: h.clock.now(),
      roles: ['provider'],
    })
    await h.bidRequest()(h.msg({ ...h.request('job-1', 0.5), approval: providerOnly }))
    assert.deepEqual(h.counts.ignored, { approval_role: 1 })
    assert.deepEqual(h.sent, [])
    assert.deepEqual(h.ledger.entries(), [])
  })

  it('a bid that cannot be delivered releases its reservation', async () => {
    h.failSends = new Error('unreachable')
    await h.bidRequest()(h.msg(h.request('job-1', 0.5)))
    const [rec] = await h.book.values()
    const actor = h.book.actor(rec.bidId)
    if (actor !== undefined) await h.book.settle(actor, (s) => s.status === 'done')
    assert.deepEqual(h.ledger.entries(), [])
    assert.equal((await h.book.get(rec.bidId))?.state, 'released')
  })
})
