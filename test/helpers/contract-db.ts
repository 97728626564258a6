/**
 * Fakes for the contract-db's parts in unit tests: the contract book over an in-memory store
 * (a fake `commit` that keeps records and accounts in maps, and can be made to fail), with the
 * notices it sends and the changes it wrote recorded. The machine and the book are the real ones.
 */
import assert from 'node:assert/strict'
import { ManualClock } from '../../actors/clock.js'
import type { Change } from '../../dms/contract-db/changes.js'
import { ContractBook } from '../../dms/contract-db/contract-book.js'
import type { ClosableContracts } from '../../dms/contract-db/handlers/closable.js'
import { applyMoves } from '../../dms/contract-db/ledger.js'
import type { Account, ContractRecord } from '../../dms/contract-db/records.js'
import { hashDoc } from '../../dms/contracts/canonical.js'
import type { SignedContract } from '../../dms/contracts/model.js'

export interface FakeContracts {
  clock: ManualClock
  book: ContractBook
  /** The handlers' view of the contracts, over `records`. */
  closable: ClosableContracts
  records: Map<string, ContractRecord>
  accounts: Map<string, Account>
  /** Every change written, in order. */
  commits: Change[]
  /** Every closed record the other party was told about. */
  notices: ContractRecord[]
  /** Makes the next commits reject with this error (nothing is written) until cleared. */
  failWith?: Error
}

/** The fake settlement signature: the hash of the body, so a test can tell what was signed. */
export const fakeSign = (body: unknown) => `signed:${hashDoc(body)}`

export function fakeContracts(clock = new ManualClock()): FakeContracts {
  const records = new Map<string, ContractRecord>()
  const accounts = new Map<string, Account>()
  const fake: FakeContracts = {
    clock,
    records,
    accounts,
    commits: [],
    notices: [],
    book: undefined as never,
    closable: undefined as never,
  }
  fake.book = new ContractBook({
    clock,
    effects: {
      commit: async (change) => {
        await Promise.resolve() // a write takes a turn, as level's does
        if (fake.failWith !== undefined) throw fake.failWith
        // As the level batch: the ledger's checks first, then everything or nothing.
        for (const acc of applyMoves(accounts, change.moves)) accounts.set(acc.peer, acc)
        records.set(change.record.contract.terms.contractId, change.record)
        fake.commits.push(change)
      },
      notify: (closed) => fake.notices.push(closed),
      signSettlement: fakeSign,
    },
  })
  fake.closable = {
    get: (id) => Promise.resolve(records.get(id)),
    accepts: (rec, type) => fake.book.accepts(rec, type),
    close: (rec, facts) => fake.book.close(rec, facts),
  }
  return fake
}

/**
 * Puts `c` on `f`'s book as active since now, with `escrowLocked` held (and `settleBy` when
 * given): what the verify handler would have proposed, its proof unsigned (the closing handlers
 * never read the signature).
 */
export function proposeActive(
  f: FakeContracts,
  c: SignedContract,
  opts: { escrowLocked: number; settleBy?: number },
): Promise<ContractRecord> {
  const now = f.clock.now()
  const proof = {
    contractId: c.terms.contractId,
    termsHash: '',
    escrowLocked: opts.escrowLocked,
    issuedAt: now,
    contractDb: c.terms.contractDb,
    signature: '',
  }
  return f.book.propose({
    contract: c,
    proof,
    activatedAt: now,
    ...(opts.settleBy === undefined ? {} : { settleBy: opts.settleBy }),
  })
}

/** What a handler refused with (its code, message and data); fails if `p` resolved. */
export async function refusal(
  p: Promise<unknown>,
): Promise<{ code: string; message: string; data?: unknown }> {
  try {
    await p
  } catch (err) {
    return err as { code: string; message: string; data?: unknown }
  }
  assert.fail('expected a refusal')
}
