/**
 * `/dms/job/cancel`: the contract's requester stops its run (the machine's `CANCEL`: the executor
 * stops the container, the receipt with the usage follows as the result), or, before the run,
 * gives the contract up (its invocation is then refused). Found by contract id in memory: a cancel
 * reads no stored record. Spec: specs/protocol.md ("Behaviours").
 */
import { RefusedError } from '../../../actors/errors.js'
import type { Message } from '../../../actors/system.js'
import type { JobCancel, JobCancelReply } from '../../protocol/messages.js'
import type { BidBook } from '../bid-book.js'
import { flatState } from '../bid-store.js'

/** States whose result is still to come: a cancel there is answered `stopping`. */
const STOPPING = new Set([
  'provisioning',
  'running',
  'publishing',
  'completed',
  'failed',
  'timed_out',
  'cancelled',
])
/** States before the run: a cancel gives the contract up. */
const BEFORE_RUN = new Set(['contracted', 'allocating'])

export function cancelHandler(d: { book: Pick<BidBook, 'byContractId'> }) {
  return (msg: Message<JobCancel>): Promise<JobCancelReply> => {
    const contractId = msg.payload?.contractId
    const found = typeof contractId === 'string' ? d.book.byContractId(contractId) : undefined
    if (found === undefined) return Promise.resolve({ stopping: false })
    if (found.requester !== msg.peer)
      return Promise.reject(new RefusedError('NOT_YOUR_JOB', 'this contract belongs to another requester'))
    const state = found.live === undefined ? 'released' : flatState(found.live.getSnapshot().value)
    if (BEFORE_RUN.has(state) || state === 'provisioning' || state === 'running')
      found.live!.send({ type: 'CANCEL', reason: 'cancelled by the requester' })
    return Promise.resolve({ stopping: STOPPING.has(state) })
  }
}
