/**
 * A queue (batch) of jobs: its stored record and its state machine. Spec: specs/queues.md.
 *
 *   active --drain--> draining --last live job ended--> drained
 *   active | draining --cancel--> cancelled
 *   active --idle for idleExpirySeconds--> expired
 *
 * Only an `active` queue takes new jobs; drained, cancelled and expired are final.
 */
import { DmsError } from '../../../actors/errors.js'

export type QueueState = 'active' | 'draining' | 'drained' | 'cancelled' | 'expired'
export type QueueEvent = 'drain' | 'drained' | 'cancel' | 'expire'

export const QUEUE_FINAL_STATES: QueueState[] = ['drained', 'cancelled', 'expired']

/** The machine: from each state, where each event leads (absent: refused). */
const EDGES: Record<QueueState, Partial<Record<QueueEvent, QueueState>>> = {
  active: { drain: 'draining', cancel: 'cancelled', expire: 'expired' },
  draining: { drained: 'drained', cancel: 'cancelled' },
  drained: {},
  cancelled: {},
  expired: {},
}

/** Where `event` takes a queue in `state`, or undefined when the machine refuses it. */
export const nextQueueState = (state: QueueState, event: QueueEvent): QueueState | undefined =>
  EDGES[state][event]

/** The jobs of a queue by state: `active` is every job not yet final. */
export interface QueueCounts {
  active: number
  completed: number
  failed: number
  cancelled: number
}

/** A queue as stored (sublevel `queues`) and shown. */
export interface QueueRecord {
  id: string
  tag: string
  /** Default `retries` of its jobs that do not set their own. */
  maxRetries?: number
  /** An active queue with no live job and no new job this long expires. */
  idleExpirySeconds: number
  state: QueueState
  createdAt: number
  /** The last job posted or ended in it (idle expiry counts from here). */
  lastActivityAt: number
  history: Array<{ state: QueueState; at: number }>
  /** Its stored jobs by state, kept at each job's change (stored with each queue change). */
  counts: QueueCounts
}

export class QueueNotFoundError extends DmsError {
  readonly statusCode = 404
  constructor(id: string) {
    super('QUEUE_NOT_FOUND', `no queue ${id}`)
  }
}

/** A job posted to a queue that no longer takes jobs, or a drain/cancel its state refuses. */
export class QueueStateError extends DmsError {
  readonly statusCode = 409
  constructor(id: string, state: QueueState, what: string) {
    super(
      state === 'draining' ? 'QUEUE_DRAINING' : 'QUEUE_ENDED',
      `queue ${id} is ${state}: it cannot ${what}`,
    )
  }
}
