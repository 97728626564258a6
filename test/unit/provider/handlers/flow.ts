/** Takes a bid through the handlers up to a given step, as a requester would. */
import { contractSignHandler } from '../../../../dms/provider/handlers/contract-sign.js'
import { invokeHandler } from '../../../../dms/provider/handlers/invoke.js'
import { jobRequestHandler } from '../../../../dms/provider/handlers/job-request.js'
import type { Harness } from '../../../helpers/provider-harness.js'
import type { Workload } from '../../../../dms/workload/workload.js'
import { hashDoc, signDoc } from '../../../../dms/contracts/canonical.js'
import { DOMAIN, type Bid } from '../../../../dms/contracts/model.js'

export function handlers(h: Harness) {
  return {
    lock: jobRequestHandler({ book: h.book }),
    sign: contractSignHandler({
      book: h.book,
      key: h.provider.key,
      peerId: () => h.provider.peer,
      contractDb: h.contractDb.peer,
    }),
    invoke: invokeHandler({ book: h.book, contractDb: h.contractDb.peer }),
  }
}

/**
 * A bid locked and contracted: its countersigned contract, signing the workload `workload` gives
 * for the bid. @default the workload `h.invocation` sends
 */
export async function contracted(h: Harness, jobId = 'job-1', workload?: (bid: Bid) => Workload) {
  const { lock, sign } = handlers(h)
  const bid = await h.bid(jobId)
  await lock(h.msg({ jobId: bid.jobId, bidId: bid.bidId }))
  const contract = h.contract(bid, h.requester, workload?.(bid))
  contract.providerSignature = (await sign(h.msg({ contract }))).providerSignature
  return { bid, contract }
}

/** A bid invoked: its run is held by the test (`h.fakes.runs`). */
export async function invoked(h: Harness, jobId = 'job-1') {
  const { bid, contract } = await contracted(h, jobId)
  const { allocationId } = await handlers(h).invoke(h.msg(h.invocation(contract)))
  return { bid, contract, allocationId, run: h.fakes.runs.get(allocationId)! }
}

/**
 * A bid contracted by an earlier version: terms that sign no workload (no `workloadHash`), which
 * today's contract-sign refuses, put in the machine as that version's handler did (its `SIGN`), as
 * a restored bid has them.
 */
export async function contractedBefore(h: Harness, jobId = 'job-1') {
  const bid = await h.bid(jobId)
  await handlers(h).lock(h.msg({ jobId: bid.jobId, bidId: bid.bidId }))
  const contract = h.contract(bid, h.requester, false)
  contract.providerSignature = signDoc(h.provider.key, DOMAIN.contract, contract.terms)
  const contractHash = hashDoc(contract.terms)
  h.book.actor(bid.bidId)!.send({ type: 'SIGN', contractId: contract.terms.contractId, contractHash })
  await h.book.persisted(bid.bidId)
  return { bid, contract }
}
