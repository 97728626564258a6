/**
 * A job's own actor (inbox `job/<id>`, its own key; contracts are still signed with the node key):
 * what providers send for one job reaches its session. Bids and declines pass the admission gate
 * (bid-admission.ts); updates, live logs and the result count only from the job's current winner.
 * Spec: specs/protocol.md ("Checks on the receiving side").
 */
import type { Logger } from 'pino'
import { KeyPair } from '../../actors/identity.js'
import type { Actor, ActorSystem } from '../../actors/system.js'
import type { Clock } from '../../actors/clock.js'
import { W } from '../protocol/behaviours.js'
import { handleOf, INBOX, jobInbox } from '../protocol/handles.js'
import { HEARTBEAT, type JobLog, type JobUpdate } from '../protocol/messages.js'
import type { BidAdmission, JobView } from './bid-admission.js'
import type { JobId } from './job-record.js'
import type { JobSession } from './session.js'
import { latestStartOf, startTooLate } from './start-window.js'

export interface JobInboxDeps {
  system: Pick<ActorSystem, 'spawn'>
  clock: Pick<Clock, 'now'>
  log: Logger
  admission: BidAdmission
  /** The job's machine now (state and record); undefined once the job no longer runs here. */
  view: () => JobView | undefined
  /** Where the job's answers, updates, logs and result are kept while its machine waits. */
  session: JobSession
  /** Told each progress update from the winner (heartbeats only mark it seen). */
  onUpdate: (update: JobUpdate) => void
  /** Told each piece of live output from the winner. */
  onLog: (log: JobLog) => void
}

/** Spawns the job's actor with its behaviours; `actor.stop()` removes it. */
export function spawnJobActor(id: JobId, d: JobInboxDeps): Actor {
  const isWinner = (peer: string) => d.view()?.record.winner?.provider === peer
  const actor: Actor = d.system
    .spawn(jobInbox(id), KeyPair.generate())
    .on(W.bid, (m) => {
      const view = d.view()
      const why = d.admission.admitBid(m, view)
      if (why === undefined) return d.session.addBid(m.payload.bid, m.from)
      d.log.debug({ jobId: id, from: m.peer, why }, 'bid ignored')
      // A valid bid that starts after the job's latest start: declined here, with the reason (it
      // shows in NO_BIDS and QUEUE_TIMEOUT), and its reservation released at once.
      if (why === 'starts_too_late' && view !== undefined) {
        const reason = startTooLate(m.payload.bid, latestStartOf(view.record), d.clock.now())
        d.session.addDecline({ jobId: id, provider: m.peer, reasons: [reason ?? 'starts too late'] })
        return void actor
          .send(handleOf(m.peer, INBOX.provider), W.bidRelease, { jobId: id, bidId: m.payload.bid.bidId })
          .catch(() => undefined)
      }
      // A bid that came after its window (the job is queued, or went on with other bids) holds a
      // reservation the job will not use: released at once rather than at the bid's expiry, so
      // the provider has room again (and says so in its capacity news).
      const { bid } = m.payload
      const unused =
        why === 'not_bidding' &&
        view !== undefined &&
        bid.jobId === id &&
        bid.provider === m.peer &&
        !view.record.bids.some((b) => b.bidId === bid.bidId)
      // To the peer that sent it, over its open connection (never to addresses it named).
      if (unused)
        actor
          .send(handleOf(m.peer, INBOX.provider), W.bidRelease, { jobId: id, bidId: bid.bidId })
          .catch(() => undefined)
    })
    .on(W.decline, (m) => {
      if (d.admission.admitDecline(m, d.view()) !== undefined) return
      // Kept without the credential: it was checked, and the record shows only the reasons.
      const { approval: _credential, ...decline } = m.payload
      d.session.addDecline(decline)
    })
    .on(W.update, (m) => {
      const u = m.payload
      if (u.jobId !== id || !isWinner(m.peer)) return
      const heartbeat = u.detail === HEARTBEAT
      d.session.addUpdate(u, d.clock.now(), heartbeat)
      // Listeners hear every step, and the heartbeats that carry the usage so far.
      if (!heartbeat || u.usage !== undefined) d.onUpdate(u)
    })
    .on(W.log, (m) => {
      const l = m.payload
      if (l.jobId !== id || !isWinner(m.peer)) return
      // Live output is kept per member: a name the job's spec does not have (or any name for a job
      // that is no pod) would be a new key the provider chose, and is dropped.
      const members = d.view()?.record.spec.members
      if (members === undefined ? l.member !== undefined : !members.some((p) => p.name === l.member))
        return d.log.debug(
          { jobId: id, from: m.peer, member: l.member },
          'log of no member of the job ignored',
        )
      d.session.addLog(l)
      d.onLog(l)
    })
    .on(W.result, (m) => {
      const r = m.payload
      if (r.jobId === id && isWinner(m.peer)) d.session.setResult(r)
    })
  return actor
}
