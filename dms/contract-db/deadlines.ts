/**
 * A contract's deadlines (specs/contract-db.md, "Deadlines"): `settleBy` = the lock + the max
 * duration + a grace for starting, fetching outputs and settling; from then on its provider may
 * claim its pay on its receipt; at `settleBy` + the claim window a contract still `active` is
 * expired by the contract-db with a full refund, so no escrow stays locked for ever. A claim can
 * be disputed by the requester until `disputeBy` = the claim + the dispute window.
 */
import type { ContractTerms } from '../contracts/model.js'
import type { ContractRecord } from './records.js'

export interface DeadlineConfig {
  /** Added to the max duration for `settleBy`. @default 10 minutes */
  settleGraceMs: number
  /** After `settleBy`, how long the provider may claim before the contract expires. @default 1 hour */
  claimWindowMs: number
  /** After a claim, how long its requester may dispute it. @default 24 hours */
  disputeWindowMs: number
}

export const DEADLINES: DeadlineConfig = {
  settleGraceMs: 10 * 60_000,
  claimWindowMs: 60 * 60_000,
  disputeWindowMs: 24 * 60 * 60_000,
}

export function settleByFor(
  t: ContractTerms,
  activatedAt: number,
  c: Pick<DeadlineConfig, 'settleGraceMs'>,
): number {
  return activatedAt + t.maxDurationSeconds * 1000 + c.settleGraceMs
}

/** The record's deadlines (a record of dms 0.1 has none stored: derived from its lock). */
export function deadlinesOf(rec: ContractRecord, c: DeadlineConfig): { settleBy: number; expiresAt: number } {
  const settleBy = rec.settleBy ?? settleByFor(rec.contract.terms, rec.activatedAt, c)
  return { settleBy, expiresAt: settleBy + c.claimWindowMs }
}
