/**
 * Errors raised by resource measurement, parsing and the ledger. Callers branch on `name`; `code`
 * is stable across the wire and the REST API, and each error carries the data needed to act.
 */
import { DmsError } from '../../actors/errors.js'
import { DIMENSIONS, shortfall, type Dimension } from './math.js'
import type { Resources } from './types.js'
import { formatBytes, formatCpu, formatGpus } from './units.js'

// Defined next to the parser (units.ts is a leaf module); re-exported so every error is here.
export { UnitError } from './units.js'

const LABEL: Record<Dimension, string> = {
  cpu: 'CPU',
  memoryBytes: 'memory',
  diskBytes: 'disk',
  gpus: 'GPUs',
}

/** An amount of one dimension for a person: `2 GiB`, `0.5 cores`, `1 GPU`. */
export function formatAmount(d: Dimension, v: number): string {
  if (d === 'cpu') return formatCpu(v)
  if (d === 'gpus') return formatGpus(v)
  return formatBytes(v)
}

function iso(ms: number): string {
  return Number.isFinite(ms) ? new Date(ms).toISOString() : String(ms)
}

/** Base of the resource errors (arguments in the order its subclasses give them). */
export class ResourceError extends DmsError {
  constructor(message: string, code: string) {
    super(code, message)
  }
}

/** The request does not fit in what is free. `shortfall` says how much is missing per dimension. */
export class InsufficientResourcesError extends ResourceError {
  readonly shortfall: Resources
  constructor(
    readonly need: Resources,
    readonly free: Resources,
  ) {
    const missing = shortfall(need, free)
    const parts = DIMENSIONS.filter((d) => missing[d] > 0).map(
      (d) => `not enough ${LABEL[d]}: need ${formatAmount(d, need[d])}, free ${formatAmount(d, free[d])}`,
    )
    super(parts.join('; '), 'INSUFFICIENT_RESOURCES')
    this.shortfall = missing
  }
}

/** What the ledger holds, by state. */
export interface Committed {
  reserved: Resources
  locked: Resources
  allocated: Resources
  /** reserved + locked + allocated */
  total: Resources
}

/** A new offer would be smaller than what is already reserved, locked or allocated. */
export class OfferBelowCommittedError extends ResourceError {
  /** How much the offer is short of the committed total, per dimension. */
  readonly shortfall: Resources
  constructor(
    readonly offered: Resources,
    readonly committed: Committed,
  ) {
    const missing = shortfall(committed.total, offered)
    const parts = DIMENSIONS.filter((d) => missing[d] > 0).map((d) => {
      const f = (v: number) => formatAmount(d, v)
      return (
        `${LABEL[d]} offered ${f(offered[d])} but ${f(committed.total[d])} is committed ` +
        `(reserved ${f(committed.reserved[d])}, locked ${f(committed.locked[d])}, allocated ${f(committed.allocated[d])})`
      )
    })
    super(
      `cannot lower the offer below what is committed: ${parts.join('; ')}; ` +
        'release reservations or wait for running jobs to finish, then try again',
      'OFFER_BELOW_COMMITTED',
    )
    this.shortfall = missing
  }
}

/** A reservation's `expiresAt` has passed (or was not in the future when reserving). */
export class ReservationExpiredError extends ResourceError {
  constructor(
    readonly id: string,
    readonly expiresAt: number,
    readonly now: number,
  ) {
    super(
      `reservation ${id} expired at ${iso(expiresAt)} (now ${iso(now)}); reserve again`,
      'RESERVATION_EXPIRED',
    )
  }
}

export class EntryExistsError extends ResourceError {
  constructor(
    readonly id: string,
    readonly state: string,
  ) {
    super(`ledger entry ${id} already exists (${state}); use a new id or release it first`, 'ENTRY_EXISTS')
  }
}

export class EntryNotFoundError extends ResourceError {
  constructor(readonly id: string) {
    super(
      `no ledger entry ${id}: it was never reserved, was released, or its reservation expired`,
      'ENTRY_NOT_FOUND',
    )
  }
}

/** The entry is not in the state the operation starts from (e.g. allocating a mere reservation). */
export class InvalidTransitionError extends ResourceError {
  constructor(
    readonly id: string,
    readonly from: string,
    readonly to: string,
    readonly expected: string,
  ) {
    super(
      `cannot make ledger entry ${id} ${to}: it is ${from}, and only ${expected} entries can be`,
      'INVALID_TRANSITION',
    )
  }
}

export class InvalidResourcesError extends ResourceError {
  constructor(
    readonly what: string,
    readonly reason: string,
  ) {
    super(`invalid resources for ${what}: ${reason}`, 'INVALID_RESOURCES')
  }
}

/** A malformed request to the ledger (empty id, non-numeric deadline...). */
export class InvalidEntryError extends ResourceError {
  constructor(reason: string) {
    super(`invalid ledger request: ${reason}`, 'INVALID_ENTRY')
  }
}

export class NoOfferError extends ResourceError {
  constructor() {
    super(
      'nothing is offered yet: onboard this machine (set an offer) before reserving resources',
      'NO_OFFER',
    )
  }
}

export class LedgerNotStartedError extends ResourceError {
  constructor() {
    super('the resource ledger is not started: call start() first', 'LEDGER_NOT_STARTED')
  }
}

/** What was asked for, the machine, the host reserve and the resulting limit, per refused dimension. */
export interface MachineLimit {
  dimension: Dimension
  requested: number
  machine: number
  hostReserve: number
  max: number
}

/**
 * An offer larger than the machine minus the host reserve. The message names each limit, e.g.
 * "cannot offer 8 cores of CPU: this machine has 2 cores, minus 0.5 cores reserved for the host = 1.5 cores at most".
 */
export class OfferExceedsMachineError extends ResourceError {
  constructor(readonly limits: MachineLimit[]) {
    const parts = limits.map((l) => {
      const f = (v: number) => formatAmount(l.dimension, v)
      const has = l.dimension === 'diskBytes' ? 'has free on its data disk' : 'has'
      return (
        `cannot offer ${f(l.requested)} of ${LABEL[l.dimension]}: this machine ${has} ${f(l.machine)}, ` +
        `minus ${f(l.hostReserve)} reserved for the host = ${f(l.max)} at most`
      )
    })
    super(parts.join('; '), 'OFFER_EXCEEDS_MACHINE')
  }
}

/** A GPU index that the machine does not have (or listed twice). */
export class UnknownGpuError extends ResourceError {
  constructor(
    readonly index: number,
    readonly available: number[],
    reason = 'this machine has no such GPU',
  ) {
    super(
      `cannot offer GPU ${index}: ${reason}; ` +
        (available.length === 0
          ? 'this machine has no GPUs (offer none)'
          : `GPUs here: ${available.join(', ')}`),
      'UNKNOWN_GPU',
    )
  }
}

/**
 * Fewer GPUs free, among those that fit the job (its model, its memory floor), than it asks: the
 * counts may fit while the GPUs that fit are taken.
 */
export class GpusTakenError extends ResourceError {
  constructor(
    readonly need: number,
    readonly free: number,
  ) {
    super(`not enough gpus: need ${need} that fit the job, free ${free}`, 'GPUS_TAKEN')
  }
}

/** A price that is not a whole number >= 0 of micro-tokens. */
export class InvalidPriceError extends ResourceError {
  constructor(
    readonly field: string,
    readonly value: unknown,
  ) {
    super(
      `invalid price ${field} ${JSON.stringify(value) ?? String(value)}: ` +
        'prices are whole numbers of micro-tokens, 0 or more (e.g. 1000)',
      'INVALID_PRICE',
    )
  }
}

/** The offer was withdrawn (`dms offboard`): nothing new is reserved until the machine is onboarded again. */
export class OfferWithdrawnError extends ResourceError {
  constructor(readonly withdrawnAt: number) {
    super(
      `offboarded at ${iso(withdrawnAt)}: no new reservations; run 'dms onboard' to offer resources again`,
      'OFFBOARDED',
    )
  }
}

/** Offboarding (or another operation on the offer) when nothing was ever onboarded. */
export class NotOnboardedError extends ResourceError {
  constructor() {
    super("this machine is not onboarded: run 'dms onboard' first", 'NOT_ONBOARDED')
  }
}
