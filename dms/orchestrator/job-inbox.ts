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
import { jobInbox } from '../protocol/handles.js'
import { HEARTBEAT, type JobLog, type JobUpdate } from '../protocol/messages.js'
import type { BidAdmission, JobView } from './bid-admission.js'
import type { JobId } from './job-record.js'
import type { JobSession } from './session.js'

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
  return d.system
    .spawn(jobInbox(id), KeyPair.generate())
    .on(W.bid, (m) => {
      const why = d.admission.admitBid(m, d.view())
      if (why === undefined) d.session.addBid(m.payload.bid, m.from)
      else d.log.debug({ jobId: id, from: m.peer, why }, 'bid ignored')
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
      d.session.addLog(l)
      d.onLog(l)
    })
    .on(W.result, (m) => {
      const r = m.payload
      if (r.jobId === id && isWinner(m.peer)) d.session.setResult(r)
    })
}
