/**
 * `/dms/job/result-again`: the contract's requester asks for the result of its run once more (it
 * was restarted after the result reached it but before it stored it). Answered from the results
 * kept until settlement (kept-results.ts); anyone else is refused NOT_YOUR_JOB, and a contract
 * with no kept result NO_RESULT (not run here, not ended yet, or already settled). Once answered,
 * the result counts as delivered (event FETCHED to its bid): the allocation stops delivering it
 * and ends `released`, as after its own delivery. Spec: specs/protocol.md ("Results asked again").
 */
import { RefusedError } from '../../../actors/errors.js'
import type { Message } from '../../../actors/system.js'
import type { JobResult, ResultRequest } from '../../protocol/messages.js'
import type { BidBook } from '../bid-book.js'
import type { KeptResults } from '../kept-results.js'

export function resultAgainHandler(d: {
  results: Pick<KeptResults, 'get'>
  /** The bids by contract: the live one of an answered contract is told FETCHED. */
  book?: Pick<BidBook, 'byContractId'>
}) {
  return async (msg: Message<ResultRequest>): Promise<JobResult> => {
    const { contractId, jobId } = msg.payload
    const kept = await d.results.get(contractId)
    if (kept === undefined || kept.jobId !== jobId)
      throw new RefusedError('NO_RESULT', `no result kept for contract ${contractId}`)
    if (kept.requester !== msg.peer)
      throw new RefusedError('NOT_YOUR_JOB', 'this contract belongs to another requester')
    d.book?.byContractId(contractId)?.live?.send({ type: 'FETCHED' })
    return kept.result
  }
}
