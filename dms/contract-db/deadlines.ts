/**
 * A contract's deadlines (specs/contract-db.md, "Deadlines"): `settleBy` = the lock (or the
 * terms' `startBy`, when later) + the max duration + a grace for starting, fetching outputs and settling; from then on its provider may
 * claim its pay on its receipt; at `settleBy` + the claim window a contract still `active` is
 * expired by the contract-db with a full refund, so no escrow stays locked for ever. A claim can
 * be disputed by the requester until `disputeBy` = the claim + the dispute window. A contract
 * whose terms carry `startBy` and that has no start note by then expires at `startBy`.
 */
import type { ContractTerms } from '../contracts/model.js'
import { termsMaxDuration } from '../contracts/terms.js'
import type { ContractRecord } from './records.js'

export interface DeadlineConfig {
  /** Added to the max duration for `settleBy`. @default 10 minutes */
  settleGraceMs: number
  /** After `settleBy`, how long the provider may claim before the contract expires. @default 1 hour */
  claimWindowMs: number
  /** After a claim, how long its requester may dispute it. @default 24 hours */
  disputeWindowMs: number
  /** The latest `startBy` a contract may carry, after its verification. @default 7 days */
  maxStartDelayMs: number
}

export const DEADLINES: DeadlineConfig = {
  settleGraceMs: 10 * 60_000,
  claimWindowMs: 60 * 60_000,
  disputeWindowMs: 24 * 60 * 60_000,
  maxStartDelayMs: 7 * 24 * 60 * 60_000,
}

/**
 * settleBy: a run may start as late as the terms' `startBy` (or at the lock, without one) and
 * last the max duration, then the grace; so `startBy <= settleBy` always holds.
 */
export function settleByFor(
  t: ContractTerms,
  activatedAt: number,
  c: Pick<DeadlineConfig, 'settleGraceMs'>,
): number {
  return Math.max(activatedAt, t.startBy ?? activatedAt) + termsMaxDuration(t) * 1000 + c.settleGraceMs
}

/**
 * The record's deadlines (a record of dms 0.1 has none stored: derived from its lock), and when
 * the contract-db expires it while active: just after `startBy` if it was not started by then,
 * else at `settleBy` + the claim window.
 */
export function deadlinesOf(
  rec: ContractRecord,
  c: DeadlineConfig,
): { settleBy: number; expiresAt: number; startBy?: number; notStartedBy?: number } {
  const settleBy = rec.settleBy ?? settleByFor(rec.contract.terms, rec.activatedAt, c)
  const startBy = rec.contract.terms.startBy
  const notStartedBy = startBy !== undefined && rec.started === undefined ? startBy : undefined
  return {
    settleBy,
    // A note at startBy itself is in time: expired from the next millisecond.
    expiresAt: Math.min(settleBy + c.claimWindowMs, (notStartedBy ?? Number.MAX_SAFE_INTEGER - 1) + 1),
    ...(startBy !== undefined ? { startBy } : {}),
    ...(notStartedBy !== undefined ? { notStartedBy } : {}),
  }
}

/**
 * The earliest a contract can come due for expiry, whatever the deadline config: its `settleBy`
 * (its lock, for a record of 0.1 without one), or its `startBy` while it has no start note. Every
 * `expiresAt` of `deadlinesOf` is at or after it, so the expiry index is keyed on it and stays
 * right when a restart changes the config; the sweep still checks `expiresAt` of what it reads.
 */
export function watchFrom(rec: ContractRecord): number {
  const settle = rec.settleBy ?? rec.activatedAt
  const startBy = rec.contract.terms.startBy
  return startBy !== undefined && rec.started === undefined ? Math.min(settle, startBy) : settle
}
