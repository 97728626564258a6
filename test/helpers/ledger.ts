/**
 * What the resource ledger's specs share (test/unit/resources/ledger*.spec.ts): a real ledger on
 * a level database in a temp dir, a clock the test sets by hand, an offer; and a lock made without
 * a bid (`lockDirect`), for any spec that needs resources held.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { silentLogger } from '../../dms/log.js'
import { ResourceLedger, type LedgerEntry, type Slot } from '../../dms/resources/ledger.js'
import type { Offer, Resources } from '../../dms/resources/types.js'
import { openDb, type Db } from '../../dms/store/db.js'

/** The time every ledger spec starts at (ms epoch). */
export const T0 = 1_700_000_000_000

/** An offer of `resources` at fixed prices, onboarded at T0. */
export function offerOf(resources: Resources): Offer {
  return {
    resources,
    prices: { perCpuHour: 100, perGiBMemoryHour: 10, perGiBDiskHour: 1, perGpuHour: 1000, minJobPrice: 5 },
    onboardedAt: T0,
  }
}

/** A reservation's deadline that never comes: the lock that follows replaces it at once. */
const NEVER = Number.MAX_SAFE_INTEGER

/**
 * Locks `resources` for `jobId` at once (in `slot` when given) without a bid, through the ledger's
 * own operations as a bid does: `reserve`, then `lock` with the caller's deadline `expiresAt`. It
 * is refused as `reserve` refuses (NO_OFFER, OFFBOARDED, ENTRY_EXISTS, INSUFFICIENT_RESOURCES,
 * INVALID_RESOURCES, INVALID_ENTRY). Two writes, not one: another mutation may run between them.
 */
export async function lockDirect(
  ledger: Pick<ResourceLedger, 'reserve' | 'lock'>,
  id: string,
  jobId: string,
  resources: Resources,
  opts: { expiresAt?: number } & Slot = {},
): Promise<LedgerEntry> {
  const { expiresAt, ...slot } = opts
  await ledger.reserve(id, jobId, resources, NEVER, slot)
  return ledger.lock(id, expiresAt === undefined ? {} : { expiresAt })
}

/** A clock the test moves by setting `t`. */
export class FakeClock {
  t = T0
  now(): number {
    return this.t
  }
}

/** Resolves to the error `p` rejected with; fails if it resolved. */
export async function rejection(p: Promise<unknown>): Promise<Error & { code?: string }> {
  try {
    await p
  } catch (err) {
    assert.ok(err instanceof Error)
    return err
  }
  assert.fail('expected a rejection')
}

export interface LedgerFixture {
  dir: string
  db: Db
  clock: FakeClock
  ledger: ResourceLedger
}

/** A started ledger on a fresh database in a temp dir named `prefix...`, its clock at T0. */
export async function openLedger(prefix: string): Promise<LedgerFixture> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix))
  const db = await openDb(dir)
  const clock = new FakeClock()
  const ledger = new ResourceLedger({ db, clock, log: silentLogger })
  await ledger.start()
  return { dir, db, clock, ledger }
}

/** Stops the ledger, closes its database and removes its dir. */
export async function closeLedger({ dir, db, ledger }: Omit<LedgerFixture, 'clock'>): Promise<void> {
  await ledger.stop()
  await db.close()
  await rm(dir, { recursive: true, force: true })
}
