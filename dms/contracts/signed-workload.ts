/**
 * What the terms sign of what runs (`ContractTerms.workloadHash`), as the provider and the
 * contract-db require it of new terms. Terms without one come from a requester of an older
 * protocol: refused with `WORKLOAD_UNSIGNED` when new, honoured when stored before (a restored
 * contract keeps the check against its image and resources). Spec: specs/protocol.md ("Contract
 * terms").
 */
import { RefusedError } from '../../actors/errors.js'
import type { ContractTerms } from './model.js'

/** Refusal code: new terms that sign no workload (an older requester). */
export const WORKLOAD_UNSIGNED = 'WORKLOAD_UNSIGNED'

/** Refusal code: an invoked workload that is not the one the terms signed. */
export const WORKLOAD_MISMATCH = 'WORKLOAD_MISMATCH'

/** The refusal of new terms `t` when they sign no workload, or undefined when they do. */
export function unsignedWorkloadRefusal(t: Pick<ContractTerms, 'workloadHash'>): RefusedError | undefined {
  if (t.workloadHash !== undefined) return undefined
  return new RefusedError(
    WORKLOAD_UNSIGNED,
    'the terms sign no workload (workloadHash): the requester speaks an older protocol; upgrade it',
  )
}
