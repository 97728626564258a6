/**
 * `/dms/job/invoke`: the contract, the contract-db's proof over its terms, and what to run. Checked
 * (the countersigned terms, the proof, the workload against the terms' `workloadHash`, then against
 * the bid and the executor's rules), then the machine's `INVOKE`: it allocates the ledger entry
 * and starts the run. Spec: specs/protocol.md ("Checks on the receiving side").
 */
import { randomUUID } from 'node:crypto'
import type { Clock } from '../../../actors/clock.js'
import { RefusedError } from '../../../actors/errors.js'
import { START_DEADLINE_PASSED } from '../../contracts/start.js'
import type { ProviderBooks } from '../books.js'
import type { Message } from '../../../actors/system.js'
import { hashDoc, verifyDoc } from '../../contracts/canonical.js'
import { DOMAIN } from '../../contracts/model.js'
import { publicKeyOfPeer } from '../../contracts/party.js'
import { contractedFor } from '../../contracts/terms.js'
import { WORKLOAD_MISMATCH } from '../../contracts/signed-workload.js'
import type { Invocation, InvocationReply } from '../../protocol/messages.js'
import { workloadHash } from '../../workload/hash.js'
import type { Workload } from '../../workload/workload.js'
import type { StoredBid } from '../bid-store.js'
import { invokedWorkloadProblem } from '../invoked-workload.js'
import { invocationProblem } from '../validate.js'
import { liveIn, mine, type BidLookup } from './common.js'

export interface InvokeDeps {
  book: BidLookup
  /** The contract-db whose proofs this provider accepts. */
  contractDb: string
  /** The contract goes into the books once invoked (books.ts). */
  books?: Pick<ProviderBooks, 'invoked'>
  /** Whether containers may use the network (`provider.allowNetwork`, of its preferences). @default false */
  allowNetwork?: boolean
  /** An invocation past the terms' startBy is refused (start-note.ts). */
  clock?: Pick<Clock, 'now'>
}

/** Whether the bid's requester cancelled its contract before this invocation. */
const cancelledBeforeRun = (rec: StoredBid): boolean =>
  rec.snapshot.context.allocation === undefined &&
  rec.snapshot.context.history.some((h) => h.state === 'cancelled')

/** Throws BAD_PROOF unless the proof is the trusted contract-db's over these terms; else `ok`. */
function checkedProof<T>(d: InvokeDeps, inv: Invocation, contractHash: string | undefined, ok: T): T {
  const { signature, ...proofBody } = inv.proof
  const cdbKey = publicKeyOfPeer(d.contractDb)
  if (
    cdbKey === undefined ||
    inv.proof.contractDb !== d.contractDb ||
    inv.proof.termsHash !== contractHash ||
    !verifyDoc(cdbKey, DOMAIN.proof, proofBody, signature)
  )
    throw new RefusedError(
      'BAD_PROOF',
      'proof of contract is not signed by the trusted contract-db for these terms',
    )
  return ok
}

export function invokeHandler(d: InvokeDeps) {
  return async (msg: Message<Invocation>): Promise<InvocationReply> => {
    const inv = msg.payload
    const t = inv?.contract?.terms
    if (t === undefined || inv.proof === undefined)
      throw new RefusedError('BAD_INVOCATION', 'invocation needs a contract and its proof')
    const rec = await mine(d.book, t.bidId, msg.peer)
    const { contractHash } = rec.snapshot.context
    const cancelled = cancelledBeforeRun(rec)
    // The same contract invoked again (a requester restored in `invoking`): its allocation, once.
    const running = rec.snapshot.context.allocation
    if (
      running !== undefined &&
      contractHash === hashDoc(t) &&
      hashDoc(running.contract.terms) === contractHash
    )
      return checkedProof(d, inv, contractHash, { allocationId: running.allocationId })
    if ((rec.state !== 'contracted' && !cancelled) || contractHash !== hashDoc(t))
      throw new RefusedError('NOT_CONTRACTED', 'no contract signed by this provider matches the invocation')
    checkedProof(d, inv, contractHash, undefined)
    if (t.startBy !== undefined && d.clock !== undefined && d.clock.now() > t.startBy)
      throw new RefusedError(
        START_DEADLINE_PASSED,
        `the contract had to start by ${new Date(t.startBy).toISOString()}: the contract-db expires it`,
      )
    // What runs is what the terms signed, before anything is done for it; terms stored by an
    // earlier version sign none, and their workload is checked against image and resources only.
    // (No workload at all is not a mismatch but a bad invocation: the check below names it.)
    const invoked = inv.workload as Workload | undefined
    if (t.workloadHash !== undefined && invoked != null && workloadHash(invoked) !== t.workloadHash)
      throw new RefusedError(
        WORKLOAD_MISMATCH,
        'the invoked workload is not the one the contract signed (its workloadHash differs)',
      )
    const bidFor = contractedFor(t)
    const runIssue =
      invocationProblem(inv, bidFor.resources.diskBytes) ??
      invokedWorkloadProblem(
        inv.workload,
        rec.snapshot.context.request.workloadNeeds,
        bidFor,
        d.allowNetwork === true,
      )
    if (runIssue !== undefined) throw new RefusedError('BAD_INVOCATION', runIssue)
    if (cancelled) throw new RefusedError('CANCELLED', 'the requester cancelled this contract')
    const actor = liveIn(d.book, rec, 'contracted')
    if (actor === undefined)
      throw new RefusedError('NOT_CONTRACTED', 'no contract signed by this provider matches the invocation')
    const allocationId = randomUUID()
    actor.send({
      type: 'INVOKE',
      allocation: {
        allocationId,
        contract: inv.contract,
        inputs: inv.inputs ?? [],
        workload: inv.workload,
      },
    })
    const snap = await d.book.settle(actor, (s) => !s.matches('allocating'))
    // Invoked before its slot can start: it waits for it (bid-machine.ts, `waiting`).
    if (!snap.matches('active') && !snap.matches('waiting')) {
      if (snap.context.allocation === undefined)
        throw new RefusedError('CANCELLED', 'the requester cancelled this contract')
      const refusal = snap.context.refusal ?? { code: 'INTERNAL', message: 'the allocation failed' }
      throw new RefusedError(refusal.code, refusal.message)
    }
    await d.book.persisted(rec.bidId)
    await d.books?.invoked(inv.contract, inv.proof)
    return { allocationId }
  }
}
