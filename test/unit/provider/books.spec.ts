/**
 * The provider's books (books.ts) on a real level database and a manual clock: a contract goes in
 * at its invocation, its receipt with its result; a settlement is kept only when the contract-db
 * signed it for that contract; past settleBy a result without a settlement is claimed (a fake
 * claim here), a failed claim is kept and tried again; the summary and the per-requester counts
 * show paid, claimed, refunded, outstanding.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ManualClock } from '../../../actors/clock.js'
import { RemoteError } from '../../../actors/errors.js'
import { signDoc } from '../../../dms/contracts/canonical.js'
import {
  DOMAIN,
  type ContractProof,
  type Settlement,
  type SignedContract,
} from '../../../dms/contracts/model.js'
import { silentLogger } from '../../../dms/log.js'
import { ProviderBooks, type BookEntry } from '../../../dms/provider/books.js'
import { openDb, type Db } from '../../../dms/store/db.js'
import { makeContract, makeReceipt, newParty } from '../../helpers/contracts.js'

const T0 = 1_800_000_000_000

describe('provider/books', () => {
  const cdb = newParty()
  const req = newParty()
  const prov = newParty()
  let dir: string
  let db: Db
  let clock: ManualClock
  let claims: BookEntry[]
  let claimAnswer: (e: BookEntry) => Settlement
  let books: ProviderBooks

  const settlement = (c: SignedContract, paid: number, reason?: string, key = cdb.key): Settlement => {
    const body = {
      contractId: c.terms.contractId,
      outcome: 'settled' as const,
      ...(reason ? { reason: reason as never } : {}),
      paidToProvider: paid,
      refundedToRequester: c.terms.escrow - paid,
      billedSeconds: 1,
      settledAt: clock.now(),
      contractDb: cdb.peer,
    }
    return { ...body, signature: signDoc(key, DOMAIN.settlement, body) }
  }
  const proofOf = (c: SignedContract, settleBy: number) =>
    ({ contractId: c.terms.contractId, settleBy }) as ContractProof
  const contract = () =>
    makeContract(req, prov, cdb.peer, { now: T0, pricePerHour: 3600, maxDurationSeconds: 60 })

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dms-books-'))
    db = await openDb(join(dir, 'db'))
    clock = new ManualClock(T0)
    claims = []
    claimAnswer = () => assert.fail('no claim expected')
    books = new ProviderBooks({
      db,
      clock,
      log: silentLogger,
      contractDb: cdb.peer,
      claim: (e) => {
        claims.push(e)
        return Promise.resolve().then(() => claimAnswer(e))
      },
    })
  })
  afterEach(async () => {
    await db.close()
    await rm(dir, { recursive: true, force: true })
  })

  it('keeps a settlement signed by the contract-db for its contract, and nothing else', async () => {
    const c = contract()
    await books.invoked(c, proofOf(c, T0 + 1000))
    assert.equal(await books.settled(settlement(c, 10, undefined, newParty().key)), false, 'forged')
    assert.equal(await books.settled({ ...settlement(c, 10), paidToProvider: 60 }), false, 'altered')
    assert.equal(await books.settled(settlement(contract(), 10)), false, 'another contract')
    assert.equal(await books.settled(settlement(c, 10)), true)
    assert.equal(await books.settled(settlement(c, 20)), false, 'kept once')
    const s = await books.summary()
    assert.deepEqual([s.paid, s.refunded, s.outstanding], [10, 50, 0])
    assert.deepEqual(s.requesters[req.peer], { paid: 1, unpaid: 0, claimed: 0 })
  })

  it('claims a result left without a settlement past settleBy, not before; a refused claim is tried again', async () => {
    const c = contract()
    await books.invoked(c, proofOf(c, T0 + 60_000))
    await books.resulted(c.terms.contractId, makeReceipt(c, prov, { wallSeconds: 10 }))
    assert.equal(await books.unpaidOf(req.peer), 1)
    assert.deepEqual(await books.claimDue(), [], 'before settleBy')
    clock.advance(60_000)
    claimAnswer = () => {
      throw new RemoteError('UNREACHABLE', 'cannot reach the contract-db')
    }
    assert.deepEqual(await books.claimDue(), [])
    assert.equal((await books.list())[0].claimError?.code, 'UNREACHABLE')
    claimAnswer = () => settlement(c, 10, 'REQUESTER_SILENT')
    const [paid] = await books.claimDue()
    assert.equal(paid.reason, 'REQUESTER_SILENT')
    assert.equal(claims.length, 2)
    assert.deepEqual(claims[1].receipt?.receipt.contractId, c.terms.contractId)
    const s = await books.summary()
    assert.deepEqual([s.paid, s.claimed, s.refunded, s.outstanding], [0, 10, 50, 0])
    assert.deepEqual(s.requesters[req.peer], { paid: 0, unpaid: 0, claimed: 1 })
    assert.equal(await books.unpaidOf(req.peer), 1, 'a claimed job counts against its requester')
    assert.deepEqual(await books.claimDue(), [], 'claimed once')
  })

  it('is kept across a restart; a contract without a result is outstanding but never claimed', async () => {
    const c = contract()
    await books.invoked(c, proofOf(c, T0))
    await db.close()
    db = await openDb(join(dir, 'db'))
    const again = new ProviderBooks({
      db,
      clock,
      log: silentLogger,
      contractDb: cdb.peer,
      claim: () => assert.fail(),
    })
    clock.advance(1_000_000)
    assert.deepEqual(await again.claimDue(), [])
    const s = await again.summary()
    assert.deepEqual([s.outstanding, s.contracts.open, s.requesters[req.peer].unpaid], [60, 1, 0])
  })
})
