/**
 * The level backend of the contract-db's store: the compliance suite on a real level database in
 * a temp dir, and the expiry index built for a database written before it.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { LevelContractDbStore } from '../../../../dms/contract-db/store/level.js'
import type { ContractRecord } from '../../../../dms/contract-db/records.js'
import { openDb, Repo } from '../../../../dms/store/db.js'
import { STORES } from '../../../../dms/store/tables.js'
import { cdbStoreCompliance, storedContract } from '../../../helpers/cdb-store-compliance.js'

async function tempDb() {
  const dir = await mkdtemp(join(tmpdir(), 'dms-cdb-store-'))
  const db = await openDb(join(dir, 'db'))
  return {
    db,
    cleanup: async () => {
      await db.close()
      await rm(dir, { recursive: true, force: true })
    },
  }
}

cdbStoreCompliance('level', async () => {
  const { db, cleanup } = await tempDb()
  return { store: new LevelContractDbStore(db), cleanup }
})

describe('contract-db store: level', () => {
  it('open() builds the expiry index of a database written before it, once', async () => {
    const { db, cleanup } = await tempDb()
    try {
      // As dms 0.2 wrote them: records in cdb-contracts, no cdb-due.
      const old = new Repo<ContractRecord>(db, STORES.cdbContracts.name)
      await old.put('a', storedContract('a', { settleBy: 4000 }))
      await old.put('b', storedContract('b', { settleBy: 4000, state: 'claimed' }))
      const store = new LevelContractDbStore(db)
      await store.open()
      assert.deepEqual(
        (await store.dueBy(4000)).map((r) => r.contract.terms.contractId),
        ['a'],
      )
      // Built once: a record written behind the store's back is not indexed at the next open.
      await old.put('c', storedContract('c', { settleBy: 4000 }))
      const again = new LevelContractDbStore(db)
      await again.open()
      assert.deepEqual(
        (await again.dueBy(4000)).map((r) => r.contract.terms.contractId),
        ['a'],
      )
    } finally {
      await cleanup()
    }
  })

  it('open() builds the listing and the counts by state of a database written before them, once', async () => {
    const { db, cleanup } = await tempDb()
    try {
      // As a dms before the paged listings wrote them: records and cdb-due, no cdb-listing.
      const old = new Repo<ContractRecord>(db, STORES.cdbContracts.name)
      await old.put('a', storedContract('a', { activatedAt: 1 }))
      await old.put('b', storedContract('b', { activatedAt: 3, state: 'claimed' }))
      await old.put('c', storedContract('c', { activatedAt: 2, state: 'claimed' }))
      const store = new LevelContractDbStore(db)
      await store.open()
      assert.deepEqual(await store.countByState(), { active: 1, claimed: 2 })
      const page = await store.page({ limit: 2 })
      assert.deepEqual(
        page.contracts.map((r) => r.contract.terms.contractId),
        ['b', 'c'],
      )
      assert.deepEqual(page.next, { activatedAt: 2, id: 'c' })
      // Kept from then on by the store's own writes, not built again.
      await store.transaction((tx) =>
        tx.putContract(storedContract('a', { activatedAt: 1, state: 'settled' })),
      )
      const again = new LevelContractDbStore(db)
      await again.open()
      assert.deepEqual(await again.countByState(), { claimed: 2, settled: 1 })
      assert.deepEqual(
        (await again.page({ limit: 10, state: 'settled' })).contracts.map((r) => r.contract.terms.contractId),
        ['a'],
      )
    } finally {
      await cleanup()
    }
  })
})
