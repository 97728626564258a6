/**
 * `/dms/job/result-again`: the contract's requester asks for the result of its run once more (it
 * was restarted after the result reached it but before it stored it), or the contract's
 * contract-db asks for it to check a result its requester rejected (specs/contract-db.md,
 * "Rejections"). Answered from the results kept until settlement (kept-results.ts); anyone else
 * is refused NOT_YOUR_JOB, and a contract with no kept result NO_RESULT (not run here, not ended
 * yet, or already settled). Once the requester has it again, the result counts as delivered
 * (event FETCHED to its bid): the allocation stops delivering it and ends `released`, as after its
 * own delivery. The contract-db is granted the output archive, to fetch and check it; the grant
 * is revoked when the contract's settlement reaches this provider (settled.ts).
 * Spec: specs/protocol.md ("Results asked again").
 */
import { RefusedError } from '../../../actors/errors.js'
import type { Message } from '../../../actors/system.js'
import type { BlobService } from '../../blobs/service.js'
import type { JobResult, ResultRequest } from '../../protocol/messages.js'
import type { BidBook } from '../bid-book.js'
import type { BookEntry } from '../books.js'
import type { KeptResults } from '../kept-results.js'

export function resultAgainHandler(d: {
  results: Pick<KeptResults, 'get'>
  /** The bids by contract: the live one of an answered contract is told FETCHED. */
  book?: Pick<BidBook, 'byContractId'>
  /** The contract-db this provider contracts with: it may ask too. */
  contractDb?: string
  /** Grants the contract-db the archive it asks for. */
  blobs?: Pick<BlobService, 'grant'>
}) {
  return async (msg: Message<ResultRequest>): Promise<JobResult> => {
    const { contractId, jobId } = msg.payload
    const kept = await d.results.get(contractId)
    if (kept === undefined || kept.jobId !== jobId)
      throw new RefusedError('NO_RESULT', `no result kept for contract ${contractId}`)
    if (d.contractDb !== undefined && msg.peer === d.contractDb) {
      // To look: the grant never keeps the archive from its release.
      if (kept.result.archive !== undefined)
        await d.blobs?.grant(msg.peer, kept.result.archive.sha256, { lookOnly: true })
      return kept.result
    }
    if (kept.requester !== msg.peer)
      throw new RefusedError('NOT_YOUR_JOB', 'this contract belongs to another requester')
    d.book?.byContractId(contractId)?.live?.send({ type: 'FETCHED' })
    return kept.result
  }
}

/**
 * When a contract's settlement reaches the books: the contract-db's grant on its archive (given
 * when it asked for the result, above) is revoked, so it holds the archive no longer.
 */
export function revokeContractDbGrant(d: {
  contractDb: string
  results: Pick<KeptResults, 'get'>
  blobs: Pick<BlobService, 'revoke'>
}): (e: BookEntry) => Promise<void> {
  return async (e) => {
    const archive = (await d.results.get(e.contractId))?.result.archive
    if (archive !== undefined) await d.blobs.revoke(d.contractDb, archive.sha256)
  }
}
