/**
 * `/dms/contract/sign`: the requester's signed terms for its bid, locked or still only reserved.
 * Checked against the bid (the parties, the trusted contract-db, the embedded bid, the terms:
 * contracts/consistency.ts, as the contract-db checks them) and the requester's signature, then
 * countersigned; the machine's `SIGN` keeps the contract's hash and id. A reserved bid is locked
 * first, as `/dms/job/request` locks it (the lock folded into the contract: one round trip fewer),
 * and refused the same way. New terms must sign the workload (`workloadHash`: its form only is
 * checked here, the workload itself at invoke); an older requester's are refused. Spec: specs/protocol.md ("Checks on the receiving side", "The lock
 * folded into the contract").
 */
import { RefusedError } from '../../../actors/errors.js'
import { keyToString, type KeyPair } from '../../../actors/identity.js'
import type { Message } from '../../../actors/system.js'
import { hashDoc, signDoc, verifyDoc } from '../../contracts/canonical.js'
import { termsBidProblem } from '../../contracts/consistency.js'
import { DOMAIN } from '../../contracts/model.js'
import { partyIsConsistent } from '../../contracts/party.js'
import { unsignedWorkloadRefusal } from '../../contracts/signed-workload.js'
import { publicKeyOf } from '../../protocol/handles.js'
import type { ContractSignReply, ContractSignRequest } from '../../protocol/messages.js'
import { described, liveIn, lockBid, mine, type BidLookup } from './common.js'

export interface ContractSignDeps {
  book: BidLookup
  /** The node key: it countersigns. */
  key: KeyPair
  peerId: () => string
  /** The contract-db this provider trusts. */
  contractDb: string
}

export function contractSignHandler(d: ContractSignDeps) {
  return async (msg: Message<ContractSignRequest>): Promise<ContractSignReply> => {
    const contract = msg.payload?.contract
    const t = contract?.terms
    if (t === undefined) throw new RefusedError('BAD_TERMS', 'no contract terms')
    const rec = await mine(d.book, t.bidId, msg.peer)
    const { bid } = rec.snapshot.context
    const mismatch =
      t.provider?.peer !== d.peerId() ||
      t.provider.publicKey !== keyToString(d.key.publicKey) ||
      t.requester?.peer !== msg.peer ||
      !partyIsConsistent(t.requester) ||
      t.contractDb !== d.contractDb ||
      hashDoc(t.bid) !== hashDoc(bid) ||
      termsBidProblem(t, bid) !== undefined
    if (mismatch) throw new RefusedError('TERMS_MISMATCH', 'contract terms do not match the bid')
    const contractHash = hashDoc(t)
    // The same terms again (a requester restored in `contracting`, whose answer was lost with it):
    // the same countersignature, in whatever state the bid has reached since (invoked, run, even
    // released). A requester killed after the contract went on stores `contracting` last, and
    // redrafts the very terms this provider signed; signing them again commits to nothing new.
    if (rec.snapshot.context.contractHash === contractHash)
      return { providerSignature: signDoc(d.key, DOMAIN.contract, t) }
    // New terms must sign what runs; only terms signed before (above) may lack it.
    const unsigned = unsignedWorkloadRefusal(t)
    if (unsigned !== undefined) throw unsigned
    const locked = liveIn(d.book, rec, 'locked')
    const actor = locked ?? liveIn(d.book, rec, 'reserved')
    // Neither locked nor reserved: nothing to contract (BID_NOT_LOCKED is kept for what a provider
    // without the folded lock answers a reserved bid: the requester then locks first).
    if (actor === undefined) throw new RefusedError('BID_NOT_OPEN', `bid is ${described(d.book, rec)}`)
    if (!verifyDoc(publicKeyOf(t.requester.peer), DOMAIN.contract, t, contract.requesterSignature))
      throw new RefusedError('BAD_SIGNATURE', 'requester signature is invalid')
    const providerSignature = signDoc(d.key, DOMAIN.contract, t)
    const signed = { contractId: t.contractId, contractHash }
    if (locked !== undefined) actor.send({ type: 'SIGN', ...signed })
    else await lockBid(d.book, actor, signed)
    if (!actor.getSnapshot().matches('contracted'))
      throw new RefusedError('BID_NOT_OPEN', `bid is ${described(d.book, rec)}`)
    await d.book.persisted(rec.bidId)
    return { providerSignature }
  }
}
