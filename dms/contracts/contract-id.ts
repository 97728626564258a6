/**
 * A contract's id is derived from its requester and what it drafted: the sha256 (hex) of the
 * canonical JSON of `{ requester, jobId, bidId, createdAt }`. The contract-db refuses an id that is
 * not, so no party can occupy another requester's contract id (a provider that saw the terms at
 * countersigning cannot submit a contract of its own under them). Spec: specs/contract-db.md
 * ("Verify", check 7).
 */
import { createHash } from 'node:crypto'
import { canonicalJson } from '../../actors/canonical-json.js'
import type { ContractTerms } from './model.js'

export interface ContractIdFacts {
  /** The requester's peer id. */
  requester: string
  jobId: string
  bidId: string
  createdAt: number
}

export function contractIdFor(f: ContractIdFacts): string {
  const { requester, jobId, bidId, createdAt } = f
  return createHash('sha256')
    .update(canonicalJson({ v: 1, requester, jobId, bidId, createdAt }))
    .digest('hex')
}

/** Whether the terms' contract id is the one derived from them. */
export function contractIdMatches(t: ContractTerms): boolean {
  try {
    return (
      t.contractId ===
      contractIdFor({ requester: t.requester.peer, jobId: t.jobId, bidId: t.bidId, createdAt: t.createdAt })
    )
  } catch {
    return false
  }
}
