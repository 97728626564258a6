/**
 * A job's inbox: bids and declines pass the admission gate into the session (a decline kept
 * without its credential); updates, logs and the result count only from the current winner, and
 * a heartbeat marks the provider seen without being kept or told.
 */
import assert from 'node:assert/strict'
import { ManualClock } from '../../../actors/clock.js'
import type { Message } from '../../../actors/system.js'
import { issueApproval } from '../../../dms/contracts/approval.js'
import { silentLogger } from '../../../dms/log.js'
import { BidAdmission, type JobView } from '../../../dms/orchestrator/bid-admission.js'
import { spawnJobActor } from '../../../dms/orchestrator/job-inbox.js'
import { JobSession } from '../../../dms/orchestrator/session.js'
import { W } from '../../../dms/protocol/behaviours.js'
import { handleOf, INBOX } from '../../../dms/protocol/handles.js'
import { HEARTBEAT, type JobLog, type JobResult, type JobUpdate } from '../../../dms/protocol/messages.js'
import { newParty } from '../../helpers/contracts.js'
import { jobRecord, signedBid, T0 } from '../../helpers/steps.js'

describe('orchestrator/job-inbox', () => {
  const cdb = newParty()
  const winner = newParty()
  const other = newParty()

  function setup(state: JobView['state'] = 'bidding') {
    const clock = new ManualClock(T0)
    const handlers = new Map<string, (m: Message<never>) => unknown>()
    const spawned: string[] = []
    const sent: Array<{ to: string; behaviour: string; payload: unknown }> = []
    const actor = {
      on(def: { name: string }, fn: (m: Message<never>) => unknown) {
        handlers.set(def.name, fn)
        return actor
      },
      send(to: { peer: string }, def: { name: string }, payload: unknown) {
        sent.push({ to: to.peer, behaviour: def.name, payload })
        return Promise.resolve()
      },
    }
    const session = new JobSession(clock)
    const told: { updates: JobUpdate[]; logs: JobLog[] } = { updates: [], logs: [] }
    const view: JobView = {
      state,
      record: jobRecord({ winner: { bidId: 'b', provider: winner.peer, why: '' } }),
    }
    spawnJobActor('job-1', {
      system: {
        spawn: (inbox: string) => {
          spawned.push(inbox)
          return actor as never
        },
      },
      clock,
      log: silentLogger,
      admission: new BidAdmission({ clock }, cdb.peer),
      view: () => view,
      session,
      onUpdate: (u) => told.updates.push(u),
      onLog: (l) => told.logs.push(l),
    })
    const deliver = <T>(def: { name: string }, peer: string, payload: T) =>
      handlers.get(def.name)!({
        behaviour: def.name,
        from: handleOf(peer, INBOX.provider, ['/ip4/127.0.0.1/tcp/7']),
        peer,
        via: 'direct',
        payload: payload as never,
      })
    return { clock, session, told, spawned, deliver, sent, view }
  }

  it('keeps a pod’s live output only under the names of its members', () => {
    const { deliver, session, told, view } = setup('running')
    view.record = {
      ...view.record,
      spec: { ...view.record.spec, members: [{ name: 'a' }, { name: 'b' }] },
    } as never
    const log = (seq: number, member?: string): JobLog => ({
      jobId: 'job-1',
      allocationId: 'x',
      stream: 'stdout',
      seq,
      data: `${member ?? 'none'}\n`,
      ...(member !== undefined ? { member } : {}),
    })
    deliver(W.log, winner.peer, log(0, 'a'))
    for (let i = 1; i <= 100; i++) deliver(W.log, winner.peer, log(i, `name-${i}`))
    deliver(W.log, winner.peer, log(101))
    deliver(W.log, winner.peer, log(102, 'b'))
    assert.deepEqual(
      told.logs.map((l) => l.member),
      ['a', 'b'],
    )
    assert.equal(session.logs('a').stdout, 'a\n')
    assert.equal(session.logs('b').stdout, 'b\n')
    assert.equal(session.logs('name-7').stdout, '')
  })

  it('releases at once a late bid the job will not use (queued, or past bidding); never its own', () => {
    const approval = issueApproval(cdb.key, { peer: other.peer, contractDb: cdb.peer, now: T0 })
    const late = setup('queued')
    const bid = signedBid(other, 'job-1')
    late.deliver(W.bid, other.peer, { bid, approval })
    assert.deepEqual(late.sent, [
      { to: other.peer, behaviour: W.bidRelease.name, payload: { jobId: 'job-1', bidId: bid.bidId } },
    ])
    assert.equal(late.session.bids.length, 0)
    // A bid the job holds (e.g. the winner's, re-sent) is never released by its inbox.
    const held = setup('requesting')
    held.view.record.bids = [bid]
    held.deliver(W.bid, other.peer, { bid, approval })
    // Nor one sent by a peer other than its provider, nor an admitted one.
    held.deliver(W.bid, winner.peer, { bid: signedBid(other, 'job-1'), approval })
    const open = setup('bidding')
    open.deliver(W.bid, other.peer, { bid: signedBid(other, 'job-1'), approval })
    assert.deepEqual([held.sent, open.sent], [[], []])
    assert.equal(open.session.bids.length, 1)
  })

  it("declines a bid that starts after the job's latest start, with the reason, and releases it", () => {
    const approval = issueApproval(cdb.key, { peer: other.peer, contractDb: cdb.peer, now: T0 })
    const open = setup('bidding')
    const bid = signedBid(other, 'job-1', { start: T0 + 600_000 })
    open.deliver(W.bid, other.peer, { bid, approval })
    assert.equal(open.session.bids.length, 0)
    assert.deepEqual(open.session.declines, [
      {
        jobId: 'job-1',
        provider: other.peer,
        reasons: [
          `starts at ${new Date(T0 + 600_000).toISOString()}, later than now: the job may not wait (give it a startBy or a queueTimeout)`,
        ],
      },
    ])
    assert.deepEqual(open.sent, [
      { to: other.peer, behaviour: W.bidRelease.name, payload: { jobId: 'job-1', bidId: bid.bidId } },
    ])
  })

  it("listens on the job's own inbox", () => {
    assert.deepEqual(setup().spawned, ['job/job-1'])
  })

  it('keeps admitted bids and declines (without the credential), drops the others', () => {
    const { session, deliver } = setup()
    const approval = issueApproval(cdb.key, { peer: winner.peer, contractDb: cdb.peer, now: T0 })
    deliver(W.bid, winner.peer, { bid: signedBid(winner, 'job-1'), approval })
    deliver(W.bid, other.peer, { bid: signedBid(other, 'job-1') }) // no credential
    deliver(W.decline, winner.peer, { jobId: 'job-1', provider: winner.peer, reasons: ['busy'], approval })
    assert.deepEqual(
      session.bids.map((b) => b.provider),
      [winner.peer],
    )
    assert.deepEqual(session.providerAddrs.get(winner.peer), ['/ip4/127.0.0.1/tcp/7'])
    assert.deepEqual(session.declines, [{ jobId: 'job-1', provider: winner.peer, reasons: ['busy'] }])
  })

  it('updates, logs and the result count only from the winner; heartbeats only mark it seen', () => {
    const { clock, session, told, deliver } = setup('running')
    const u = (detail?: string): JobUpdate => ({
      jobId: 'job-1',
      allocationId: 'a',
      state: 'running',
      at: T0,
      detail,
    })
    deliver(W.update, other.peer, u())
    deliver(W.update, winner.peer, { ...u(), jobId: 'job-2' })
    assert.equal(session.lastSeen, 0)
    clock.advance(1000)
    deliver(W.update, winner.peer, u(HEARTBEAT))
    assert.equal(session.lastSeen, T0 + 1000)
    assert.deepEqual(session.updates, [])
    deliver(W.update, winner.peer, u('pulling'))
    assert.deepEqual(
      told.updates.map((x) => x.detail),
      ['pulling'],
    )
    const log: JobLog = { jobId: 'job-1', allocationId: 'a', stream: 'stdout', seq: 0, data: 'hi\n' }
    deliver(W.log, other.peer, log)
    deliver(W.log, winner.peer, log)
    assert.equal(told.logs.length, 1)
    assert.equal(session.logs().stdout, 'hi\n')
    // A member's log for a job that is no pod is dropped: live output is kept per member name.
    deliver(W.log, winner.peer, { ...log, seq: 1, member: 'forged' })
    assert.equal(told.logs.length, 1)
    assert.equal(session.logs('forged').stdout, '')
    deliver(W.result, other.peer, { jobId: 'job-1' } as JobResult)
    assert.equal(session.result, undefined)
    deliver(W.result, winner.peer, { jobId: 'job-1', stdout: 'ok' } as JobResult)
    assert.equal((session.result as JobResult | undefined)?.stdout, 'ok')
  })
})
