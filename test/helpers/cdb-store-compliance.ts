/**
 * The contract-db store compliance suite (specs/contract-db.md, "Storage backends"): what every
 * backend behind `ContractDbStore` must do, checked through the port alone. A backend's spec calls
 * `cdbStoreCompliance(name, open)`; `open` gives a fresh, empty store and a cleanup.
 *
 * Checked: a transaction's writes land together or not at all, it reads its own writes,
 * concurrent read-then-write transactions lose no update, approvals are deleted, listings
 * select by state and party, pages cover every contract once in order and refuse a bad limit or
 * cursor, the counts by state follow each change, and the expiry index (`dueBy`) holds exactly the active contracts
 * whose `watchFrom` has come, following a start note and a close.
 */
import assert from 'node:assert/strict'
import type { ContractRecord, StoredState } from '../../dms/contract-db/records.js'
import { MAX_PAGE, type ContractCursor } from '../../dms/contract-db/store/page.js'
import type { ContractDbStore } from '../../dms/contract-db/store/port.js'

/** A fresh empty store of the backend, and what removes it. */
export type OpenStore = () => Promise<{ store: ContractDbStore; cleanup: () => Promise<void> }>

/**
 * A contract record with only what the store reads (id, parties, deadlines, state): the store
 * keeps documents whole and checks none of them.
 */
export function storedContract(
  id: string,
  o: {
    state?: StoredState
    requester?: string
    provider?: string
    activatedAt?: number
    settleBy?: number
    startBy?: number
    started?: boolean
    /** @default 0 (a volunteer contract) */
    escrow?: number
  } = {},
): ContractRecord {
  const terms = {
    contractId: id,
    requester: { peer: o.requester ?? 'req' },
    provider: { peer: o.provider ?? 'prov' },
    escrow: o.escrow ?? 0,
    ...(o.startBy !== undefined ? { startBy: o.startBy } : {}),
  }
  return {
    contract: { terms },
    state: o.state ?? 'active',
    activatedAt: o.activatedAt ?? 1000,
    settleBy: o.settleBy ?? 10_000,
    ...(o.started === true ? { started: { at: 1500, note: {} } } : {}),
    history: [{ state: o.state ?? 'active', at: o.activatedAt ?? 1000 }],
  } as unknown as ContractRecord
}

const ids = (recs: ContractRecord[]) => recs.map((r) => r.contract.terms.contractId).sort()
/** Byte order (for ASCII, JavaScript's own), as the listings sort ids. */
const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

export function cdbStoreCompliance(name: string, open: OpenStore): void {
  describe(`contract-db store compliance: ${name}`, function () {
    let store: ContractDbStore
    let cleanup: () => Promise<void>

    beforeEach(async () => {
      ;({ store, cleanup } = await open())
      await store.open()
    })
    afterEach(async () => {
      await cleanup()
    })

    it('a transaction writes all it wrote, or nothing when its function fails', async () => {
      await store.transaction((tx) => {
        tx.putAccount({ peer: 'a', balance: 5, escrow: 1 })
        tx.putContract(storedContract('c1'))
        tx.putCredited({ credited: 6, initialisedAt: 1, initialisedWith: 0 })
      })
      await assert.rejects(
        store.transaction((tx) => {
          tx.putAccount({ peer: 'a', balance: 0, escrow: 0 })
          tx.putContract(storedContract('c2'))
          throw new Error('refused')
        }),
        /refused/,
      )
      assert.deepEqual(await store.account('a'), { peer: 'a', balance: 5, escrow: 1 })
      assert.equal(await store.contract('c2'), undefined)
      assert.equal((await store.credited())?.credited, 6)
      assert.deepEqual(ids(await store.dueBy(Number.MAX_SAFE_INTEGER)), ['c1'])
    })

    it('a transaction reads its own writes, and a write is a copy of what was given', async () => {
      await store.transaction(async (tx) => {
        const acc = { peer: 'a', balance: 1, escrow: 0 }
        tx.putAccount(acc)
        acc.balance = 99
        assert.equal((await tx.account('a'))?.balance, 1)
        tx.putApproval({ peer: 'p', approvedAt: 1 })
        tx.delApproval('p')
        assert.equal(await tx.approval('p'), undefined)
      })
      assert.equal((await store.account('a'))?.balance, 1)
      assert.equal(await store.approval('p'), undefined)
    })

    it('concurrent read-then-write transactions lose no update', async () => {
      await Promise.all(
        Array.from({ length: 20 }, () =>
          store.transaction(async (tx) => {
            const acc = (await tx.account('a')) ?? { peer: 'a', balance: 0, escrow: 0 }
            await new Promise((r) => setImmediate(r))
            tx.putAccount({ ...acc, balance: acc.balance + 1 })
          }),
        ),
      )
      assert.equal((await store.account('a'))?.balance, 20)
    })

    it('approvals are put, listed and deleted', async () => {
      await store.transaction((tx) => {
        tx.putApproval({ peer: 'p1', approvedAt: 1 })
        tx.putApproval({ peer: 'p2', approvedAt: 2, roles: ['provider'] })
      })
      await store.transaction((tx) => tx.delApproval('p1'))
      assert.deepEqual(await store.approvals(), [{ peer: 'p2', approvedAt: 2, roles: ['provider'] }])
    })

    it('contracts are listed by state and by party', async () => {
      await store.transaction((tx) => {
        tx.putContract(storedContract('c1', { requester: 'r1', provider: 'p1' }))
        tx.putContract(storedContract('c2', { requester: 'r2', provider: 'p1', state: 'settled' }))
        tx.putContract(storedContract('c3', { requester: 'r2', provider: 'p2' }))
      })
      assert.deepEqual(ids(await store.contracts()), ['c1', 'c2', 'c3'])
      assert.deepEqual(ids(await store.contracts({ state: 'active' })), ['c1', 'c3'])
      assert.deepEqual(ids(await store.contracts({ party: 'p1' })), ['c1', 'c2'])
      assert.deepEqual(ids(await store.contracts({ party: 'r2', state: 'active' })), ['c3'])
    })

    it('pages cover every contract once, newest first, while contracts are added', async () => {
      // Ties on activatedAt and ids whose byte order differs from a locale's ("B" < "a" < "b").
      const first: ContractRecord[] = []
      for (let i = 0; i < 23; i++)
        for (const id of i % 5 === 0 ? [`c${i}-B`, `c${i}-a`, `c${i}-b`] : [`c${i}`])
          first.push(
            storedContract(id, {
              activatedAt: 1000 + (i % 9) * 10,
              state: i % 3 === 0 ? 'settled' : 'active',
            }),
          )
      await store.transaction((tx) => first.forEach((r) => tx.putContract(r)))
      const order = (recs: ContractRecord[]) =>
        [...recs]
          .sort(
            (a, b) =>
              b.activatedAt - a.activatedAt || cmp(b.contract.terms.contractId, a.contract.terms.contractId),
          )
          .map((r) => r.contract.terms.contractId)
      const seen: string[] = []
      let after: ContractCursor | undefined
      let added = 0
      for (let pages = 0; pages < 20; pages++) {
        const page = await store.page({ limit: 4, ...(after !== undefined ? { after } : {}) })
        assert.ok(page.contracts.length <= 4)
        seen.push(...page.contracts.map((r) => r.contract.terms.contractId))
        // Newer contracts arrive between pages: they are before the cursor, so not listed again.
        await store.transaction((tx) =>
          tx.putContract(storedContract(`new${added++}`, { activatedAt: 5000 + added })),
        )
        if (page.next === undefined) break
        after = page.next
      }
      assert.deepEqual(seen, order(first))
      const active = first.filter((r) => r.state === 'active')
      const byState: string[] = []
      after = undefined
      do {
        const page = await store.page({
          state: 'active',
          limit: 5,
          ...(after !== undefined ? { after } : {}),
        })
        byState.push(...page.contracts.map((r) => r.contract.terms.contractId))
        after = page.next
      } while (after !== undefined)
      assert.deepEqual(byState, [
        ...Array.from({ length: added }, (_, i) => `new${added - 1 - i}`),
        ...order(active),
      ])
      const exact = await store.page({ state: 'settled', limit: first.length - active.length })
      assert.equal(exact.next, undefined, 'a page that ends the listing has no next')
      assert.deepEqual((await store.page({ state: 'expired', limit: 1000 })).contracts, [])
    })

    it('countByState and the pages by state follow every change of state', async () => {
      await store.transaction((tx) => {
        tx.putContract(storedContract('c1'))
        tx.putContract(storedContract('c2'))
        tx.putContract(storedContract('c3', { state: 'settled' }))
      })
      assert.deepEqual(await store.countByState(), { active: 2, settled: 1 })
      await store.transaction((tx) => {
        tx.putContract(storedContract('c1', { state: 'expired' }))
        tx.putContract(storedContract('c2', { state: 'claimed' }))
        tx.putContract(storedContract('c3', { state: 'settled' }))
      })
      await assert.rejects(
        store.transaction((tx) => {
          tx.putContract(storedContract('c4'))
          throw new Error('refused')
        }),
      )
      assert.deepEqual(await store.countByState(), { expired: 1, claimed: 1, settled: 1 })
      assert.deepEqual(ids((await store.page({ state: 'active', limit: 10 })).contracts), [])
      assert.deepEqual(ids((await store.page({ state: 'claimed', limit: 10 })).contracts), ['c2'])
      assert.deepEqual(ids((await store.page({ limit: 10 })).contracts), ['c1', 'c2', 'c3'])
    })

    it('a page past the maximum, of no size, or after a malformed cursor is refused before any read', async () => {
      for (const limit of [0, -1, MAX_PAGE + 1, 1.5, Number.NaN, Number.MAX_SAFE_INTEGER])
        await assert.rejects(store.page({ limit }), { code: 'BAD_LIMIT' })
      for (const after of [
        { activatedAt: -1, id: 'x' },
        { activatedAt: 2 ** 53, id: 'x' },
        { activatedAt: 1, id: '' },
        { activatedAt: 1, id: 'x'.repeat(257) },
      ])
        await assert.rejects(store.page({ limit: 1, after }), { code: 'BAD_CURSOR' })
      await assert.rejects(store.page({ limit: 1, state: 'locking' as StoredState }), { code: 'BAD_STATE' })
      assert.equal((await store.page({ limit: MAX_PAGE })).contracts.length, 0)
    })

    it('activeVolunteers: the active escrow-0 contracts of one requester, following commits', async () => {
      await store.transaction((tx) => {
        tx.putContract(storedContract('v1', { requester: 'r1' }))
        tx.putContract(storedContract('v2', { requester: 'r2' }))
        tx.putContract(storedContract('paid', { requester: 'r1', escrow: 5 }))
        tx.putContract(storedContract('closed', { requester: 'r1', state: 'settled' }))
      })
      assert.deepEqual([await store.activeVolunteers('r1'), await store.activeVolunteers('r2')], [1, 1])
      await store.transaction((tx) => {
        tx.putContract(storedContract('v3', { requester: 'r1' }))
        tx.putContract(storedContract('v2', { requester: 'r2', state: 'terminated' }))
      })
      // A transaction that fails moves no count.
      await assert.rejects(
        store.transaction((tx) => {
          tx.putContract(storedContract('v4', { requester: 'r1' }))
          throw new Error('no')
        }),
      )
      assert.deepEqual(
        [
          await store.activeVolunteers('r1'),
          await store.activeVolunteers('r2'),
          await store.activeVolunteers('x'),
        ],
        [2, 0, 0],
      )
    })

    it('books: the credited total and the accounts summed, in one read', async () => {
      assert.deepEqual(await store.books(), { credited: undefined, balances: 0, escrow: 0, accounts: 0 })
      const credited = { credited: 100, initialisedAt: 1, initialisedWith: 0 }
      await store.transaction((tx) => {
        tx.putAccount({ peer: 'a', balance: 40, escrow: 20 })
        tx.putAccount({ peer: 'b', balance: 2 ** 52, escrow: 1 })
        tx.putCredited(credited)
      })
      assert.deepEqual(await store.books(), { credited, balances: 40 + 2 ** 52, escrow: 21, accounts: 2 })
    })

    it('dueBy: the active contracts whose watchFrom has come, following start notes and closes', async () => {
      await store.transaction((tx) => {
        tx.putContract(storedContract('late', { settleBy: 5000 }))
        tx.putContract(storedContract('later', { settleBy: 9000 }))
        tx.putContract(storedContract('unstarted', { settleBy: 9000, startBy: 3000 }))
        tx.putContract(storedContract('closed', { settleBy: 2000, state: 'settled' }))
      })
      assert.deepEqual(ids(await store.dueBy(2999)), [])
      assert.deepEqual(ids(await store.dueBy(3000)), ['unstarted'])
      assert.deepEqual(ids(await store.dueBy(5000)), ['late', 'unstarted'])
      // A start note moves it from its startBy to its settleBy; a close takes it out.
      await store.transaction((tx) => {
        tx.putContract(storedContract('unstarted', { settleBy: 9000, startBy: 3000, started: true }))
        tx.putContract(storedContract('late', { settleBy: 5000, state: 'expired' }))
      })
      assert.deepEqual(ids(await store.dueBy(8999)), [])
      assert.deepEqual(ids(await store.dueBy(9000)), ['later', 'unstarted'])
    })
  })
}
