/**
 * Bid admission, the one place that says why a bid or decline is not kept: each reason on a bid
 * that is good but for one thing (real signatures and approval credentials), not bidding, and the
 * gate that counts what it ignores by reason.
 */
import assert from 'node:assert/strict'
import { ManualClock } from '../../../actors/clock.js'
import type { Message } from '../../../actors/system.js'
import { issueApproval } from '../../../dms/contracts/approval.js'
import type { Bid, Role } from '../../../dms/contracts/model.js'
import {
  admissionOf,
  BidAdmission,
  bidProblem,
  declineProblem,
  type AdmissionContext,
} from '../../../dms/orchestrator/bid-admission.js'
import type { JobState } from '../../../dms/orchestrator/job-record.js'
import { startTooLate } from '../../../dms/orchestrator/start-window.js'
import { handleOf, INBOX } from '../../../dms/protocol/handles.js'
import type { BidMessage, Decline } from '../../../dms/protocol/messages.js'
import { newParty, type Who } from '../../helpers/contracts.js'
import { jobRecord, signedBid, T0 } from '../../helpers/steps.js'

describe('orchestrator/bid-admission', () => {
  const cdb = newParty()
  const p = newParty()
  const approvalOf = (who: Who, key = cdb.key, roles?: Role[]) =>
    issueApproval(key, { peer: who.peer, contractDb: cdb.peer, now: T0, roles })
  const bidMsg = (bid: Bid, o: { peer?: string; approval?: ReturnType<typeof approvalOf> | null } = {}) =>
    ({
      behaviour: '/dms/job/bid',
      from: handleOf(o.peer ?? p.peer, INBOX.provider, ['/ip4/127.0.0.1/tcp/1']),
      peer: o.peer ?? p.peer,
      via: 'direct',
      payload: { bid, ...(o.approval === null ? {} : { approval: o.approval ?? approvalOf(p) }) },
    }) satisfies Message<BidMessage>
  const ctx = (over: Partial<AdmissionContext> = {}): AdmissionContext => ({
    jobId: 'job-1',
    spec: jobRecord().spec,
    excluded: [],
    contractDb: cdb.peer,
    now: T0,
    ...over,
  })
  const good = signedBid(p, 'job-1')

  it('keeps a bid of an approved provider, signed, for exactly what was asked', () => {
    assert.equal(bidProblem(bidMsg(good), ctx()), undefined)
  })

  it('says why each other bid is unusable', () => {
    const other = newParty()
    const spec = jobRecord().spec
    const cases: Array<[string, Message<BidMessage>, AdmissionContext | undefined]> = [
      ['not_bidding', bidMsg(good), undefined],
      ['wrong_job', bidMsg(signedBid(p, 'job-2')), ctx()],
      ['not_sender', bidMsg(good, { peer: other.peer }), ctx()],
      ['not_allowed', bidMsg(good), ctx({ spec: { ...spec, providers: { allow: [other.peer], deny: [] } } })],
      ['not_allowed', bidMsg(good), ctx({ spec: { ...spec, providers: { allow: [], deny: [p.peer] } } })],
      ['excluded', bidMsg(good), ctx({ excluded: [p.peer] })],
      ['other_terms', bidMsg({ ...good, image: 'other:1' }), ctx()],
      ['bad_total', bidMsg({ ...good, total: good.total + 1 }), ctx()],
      ['bad_engine', bidMsg({ ...good, engine: 'Docker\u001b[2J' }), ctx()],
      ['over_price', bidMsg(good), ctx({ spec: { ...spec, maxPrice: good.total - 1 } })],
      ['expired', bidMsg(good), ctx({ now: good.expiresAt })],
      ['no_approval', bidMsg(good, { approval: null }), ctx()],
      ['approval_forged', bidMsg(good, { approval: approvalOf(p, other.key) }), ctx()],
      ['approval_other_peer', bidMsg(good, { approval: approvalOf(other) }), ctx()],
      ['approval_role', bidMsg(good, { approval: approvalOf(p, cdb.key, ['requester', 'relay']) }), ctx()],
      ['bad_signature', bidMsg({ ...good, signature: signedBid(p, 'job-1').signature }), ctx()],
    ]
    for (const [want, m, c] of cases) assert.equal(bidProblem(m, c), want, want)
  })

  it("a valid bid that starts after the job's latest start is starts_too_late (30 s of clock skew pass)", () => {
    const later = signedBid(p, 'job-1', { start: T0 + 90_000 })
    assert.equal(bidProblem(bidMsg(later), ctx()), 'starts_too_late', 'no startBy, no queueTimeout: now')
    assert.equal(bidProblem(bidMsg(signedBid(p, 'job-1', { start: T0 + 29_000 })), ctx()), undefined, 'skew')
    assert.equal(bidProblem(bidMsg(later), ctx({ latestStart: T0 + 90_000 })), undefined)
    assert.equal(bidProblem(bidMsg(later), ctx({ latestStart: T0 + 50_000 })), 'starts_too_late')
    // Checked last: an unsigned or unapproved later bid is ignored for that, never made a decline.
    assert.equal(bidProblem(bidMsg(later, { approval: null }), ctx()), 'no_approval')
    // The latest start: startBy (a time, or a duration from the start), else the queue deadline.
    const spec = jobRecord().spec
    const latest = (over: Partial<typeof spec>) =>
      admissionOf({ state: 'bidding', record: jobRecord({ spec: { ...spec, ...over } }) }, cdb.peer, T0)
        ?.latestStart
    assert.equal(latest({}), undefined)
    assert.equal(latest({ queueTimeoutSeconds: 300 }), T0 + 300_000)
    assert.equal(latest({ queueTimeoutSeconds: 300, startBy: { withinSeconds: 60 } }), T0 + 60_000)
    assert.equal(latest({ startAt: T0 + 1000, startBy: { withinSeconds: 60 } }), T0 + 61_000)
    assert.equal(latest({ startBy: { at: T0 + 7000 } }), T0 + 7000)
  })

  it('a bid whose earliestStart is no time (finite, but past what a Date holds) is bad_start, before any reason is written', () => {
    for (const start of [1e20, -1e20, T0 + 0.5]) {
      const bid = signedBid(p, 'job-1', { start })
      // A later start would be declined with a reason naming the time: it must not throw.
      assert.equal(bidProblem(bidMsg(bid), ctx()), 'bad_start', String(start))
      assert.equal(bidProblem(bidMsg(bid), ctx({ latestStart: T0 })), 'bad_start', String(start))
    }
    assert.equal(
      startTooLate({ earliestStart: 1e20 }, undefined, T0)?.startsWith('starts at 100000000000000000000,'),
      true,
    )
  })

  it('a bid or decline is checked only while the job is bidding', () => {
    const job = (state: JobState) => ({ state, record: jobRecord({ excluded: ['x'] }) })
    assert.deepEqual(admissionOf(job('bidding'), cdb.peer, T0), {
      jobId: 'job-1',
      spec: jobRecord().spec,
      excluded: ['x'],
      contractDb: cdb.peer,
      now: T0,
    })
    for (const state of ['selecting', 'running', 'completed'] as const)
      assert.equal(admissionOf(job(state), cdb.peer, T0), undefined)
    assert.equal(admissionOf(undefined, cdb.peer, T0), undefined)
  })

  it('declines: kept from an approved sender for this job only', () => {
    const d = (o: Partial<Decline> = {}, peer = p.peer): Message<Decline> => ({
      behaviour: '/dms/job/decline',
      from: handleOf(peer, INBOX.provider),
      peer,
      via: 'direct',
      payload: { jobId: 'job-1', provider: p.peer, reasons: ['busy'], approval: approvalOf(p), ...o },
    })
    assert.equal(declineProblem(d(), ctx()), undefined)
    assert.equal(declineProblem(d(), undefined), 'not_bidding')
    assert.equal(declineProblem(d({ jobId: 'job-2' }), ctx()), 'wrong_job')
    assert.equal(declineProblem(d({}, newParty().peer), ctx()), 'not_sender')
    assert.equal(declineProblem(d({ approval: undefined }), ctx()), 'no_approval')
    assert.equal(
      declineProblem(d({ approval: approvalOf(p, cdb.key, ['requester']) }), ctx()),
      'approval_role',
    )
  })

  it('the gate counts what it ignores, by reason', () => {
    const gate = new BidAdmission({ clock: new ManualClock(T0) }, cdb.peer)
    const bidding = { state: 'bidding' as const, record: jobRecord() }
    assert.equal(gate.admitBid(bidMsg(good), bidding), undefined)
    assert.equal(gate.admitBid(bidMsg(good, { approval: null }), bidding), 'no_approval')
    assert.equal(gate.admitBid(bidMsg(good), { ...bidding, state: 'running' }), 'not_bidding')
    assert.equal(gate.admitBid(bidMsg(good), undefined), 'not_bidding')
    assert.deepEqual(gate.bidsIgnored, { no_approval: 1, not_bidding: 2 })
    const decline: Message<Decline> = {
      behaviour: '/dms/job/decline',
      from: handleOf(p.peer, INBOX.provider),
      peer: p.peer,
      via: 'direct',
      payload: { jobId: 'job-1', provider: p.peer, reasons: ['busy'] },
    }
    assert.equal(gate.admitDecline(decline, bidding), 'no_approval')
    assert.deepEqual(gate.declinesIgnored, { no_approval: 1 })
  })

  it("the gate verifies a provider's credential once, and still refuses one altered, forged or not the sender's", () => {
    const gate = new BidAdmission({ clock: new ManualClock(T0) }, cdb.peer)
    const bidding = { state: 'bidding' as const, record: jobRecord() }
    const cred = approvalOf(p)
    assert.equal(gate.admitBid(bidMsg(good, { approval: cred }), bidding), undefined)
    // The same signature over other fields (a longer life) is not the credential that was verified.
    const stretched = { ...cred, expiresAt: cred.expiresAt + 3_600_000 }
    assert.equal(gate.admitBid(bidMsg(good, { approval: stretched }), bidding), 'approval_forged')
    assert.equal(
      gate.admitBid(bidMsg(good, { approval: approvalOf(p, newParty().key) }), bidding),
      'approval_forged',
    )
    // A good credential sent by another peer is still that peer's problem.
    const other = newParty()
    const theirs = signedBid(other, 'job-1')
    assert.equal(
      gate.admitBid(bidMsg(theirs, { peer: other.peer, approval: cred }), bidding),
      'approval_other_peer',
    )
    assert.equal(gate.admitBid(bidMsg(good, { approval: cred }), bidding), undefined)
  })
})
