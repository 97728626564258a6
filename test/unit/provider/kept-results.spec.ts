/**
 * Results kept until settlement (kept-results.ts) on a real level database and a manual clock,
 * and `/dms/job/result-again` over them: only the contract's requester gets its result back; a
 * contract with none kept (never kept, or dropped an hour after its settlement) is refused NO_RESULT; an
 * answered ask counts as the result's delivery; the store is bounded by count and age.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ManualClock } from '../../../actors/clock.js'
import type { Message } from '../../../actors/system.js'
import type { BookEntry } from '../../../dms/provider/books.js'
import { resultAgainHandler, revokeContractDbGrant } from '../../../dms/provider/handlers/result-again.js'
import { KeptResults } from '../../../dms/provider/kept-results.js'
import type { JobResult, ResultRequest } from '../../../dms/protocol/messages.js'
import { openDb, type Db } from '../../../dms/store/db.js'
import { makeContract, makeReceipt, newParty, type Who } from '../../helpers/contracts.js'

const T0 = 1_800_000_000_000

describe('provider/kept-results and /dms/job/result-again', () => {
  const req = newParty()
  const prov = newParty()
  const stranger = newParty()
  let dir: string
  let db: Db
  let clock: ManualClock

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dms-kept-'))
    db = await openDb(join(dir, 'db'))
    clock = new ManualClock(T0)
  })
  afterEach(async () => {
    await db.close()
    await rm(dir, { recursive: true, force: true })
  })

  const resultOf = (jobId: string) => {
    const contract = makeContract(req, prov, newParty().peer, { jobId })
    const result: JobResult = {
      jobId,
      receipt: makeReceipt(contract, prov),
      stdout: 'out\n',
      stderr: '',
      truncated: false,
      outputs: [],
    }
    return { contractId: contract.terms.contractId, result }
  }
  const ask = (payload: ResultRequest, who: Who): Message<ResultRequest> =>
    ({
      behaviour: '/dms/job/result-again',
      payload,
      peer: who.peer,
      via: 'direct',
    }) as unknown as Message<ResultRequest>

  it("gives the contract's requester its result again; anyone else is refused NOT_YOUR_JOB", async () => {
    const kept = new KeptResults(db, clock)
    const fetched: string[] = []
    const book = {
      byContractId: (id: string) => ({
        bidId: 'bid-1',
        requester: req.peer,
        live: { send: (e: { type: string }) => void fetched.push(`${e.type} ${id}`) } as never,
      }),
    }
    const handle = resultAgainHandler({ results: kept, book })
    const { contractId, result } = resultOf('job-1')
    await kept.keep(contractId, req.peer, result)
    assert.deepEqual(await handle(ask({ jobId: 'job-1', contractId }, req)), result)
    await assert.rejects(handle(ask({ jobId: 'job-1', contractId }, stranger)), { code: 'NOT_YOUR_JOB' })
    await assert.rejects(handle(ask({ jobId: 'job-2', contractId }, req)), { code: 'NO_RESULT' })
    await assert.rejects(handle(ask({ jobId: 'job-1', contractId: 'c'.repeat(64) }, req)), {
      code: 'NO_RESULT',
    })
    // Only the answered ask counts as a delivery (its allocation stops delivering).
    assert.deepEqual(fetched, [`FETCHED ${contractId}`])
  })

  it('gives the contract-db the result and a grant on its archive (to check a rejection), not a delivery', async () => {
    const kept = new KeptResults(db, clock)
    const cdb = newParty()
    const fetched: string[] = []
    const grants: string[] = []
    const book = {
      byContractId: () => ({ live: { send: (e: { type: string }) => void fetched.push(e.type) } as never }),
    }
    const blobs = {
      grant: (peer: string, sha: string, o?: { lookOnly?: boolean }) =>
        Promise.resolve(void grants.push(`${peer} ${sha} ${JSON.stringify(o)}`)),
    }
    const handle = resultAgainHandler({ results: kept, book: book as never, contractDb: cdb.peer, blobs })
    const { contractId, result } = resultOf('job-1')
    const archive = { sha256: 'ab'.repeat(32), size: 2048 }
    await kept.keep(contractId, req.peer, { ...result, archive })
    assert.deepEqual(await handle(ask({ jobId: 'job-1', contractId }, cdb)), { ...result, archive })
    assert.deepEqual(grants, [`${cdb.peer} ${archive.sha256} {"lookOnly":true}`])
    assert.deepEqual(fetched, [], 'the requester has not had it: its delivery goes on')
    // Another contract-db than this provider's is a stranger.
    await assert.rejects(handle(ask({ jobId: 'job-1', contractId }, newParty())), { code: 'NOT_YOUR_JOB' })
    // The grant is revoked when the contract's settlement reaches the books.
    const revoked: string[] = []
    const revoke = revokeContractDbGrant({
      contractDb: cdb.peer,
      results: kept,
      blobs: { revoke: (peer, sha) => Promise.resolve(void revoked.push(`${peer} ${sha}`)) },
    })
    await revoke({ contractId } as BookEntry)
    assert.deepEqual(revoked, [`${cdb.peer} ${archive.sha256}`])
  })

  it('a settled contract’s result is kept an hour more, then dropped and not kept again', async () => {
    const kept = new KeptResults(db, clock)
    const handle = resultAgainHandler({ results: kept })
    const { contractId, result } = resultOf('job-1')
    await kept.keep(contractId, req.peer, result)
    await kept.settled(contractId)
    // A requester killed after it settled, restored in `running`, still gets its result.
    clock.advance(3_599_000)
    assert.deepEqual(await handle(ask({ jobId: 'job-1', contractId }, req)), result)
    clock.advance(1000)
    const other = resultOf('job-2')
    await kept.keep(other.contractId, req.peer, other.result)
    assert.equal(await kept.get(contractId), undefined, 'settled an hour ago: dropped')
    await kept.keep(contractId, req.peer, result)
    assert.equal(await kept.get(contractId), undefined, 'not kept again by a later transition')
    await assert.rejects(handle(ask({ jobId: 'job-1', contractId }, req)), { code: 'NO_RESULT' })
    // Settled before it was ever kept here: not kept by a later transition either.
    const late = resultOf('job-3')
    await kept.settled(late.contractId)
    await kept.keep(late.contractId, req.peer, late.result)
    assert.equal(await kept.size(), 1)
  })

  it('bounded: the oldest beyond maxKept and any older than maxAgeMs go when one is kept', async () => {
    const kept = new KeptResults(db, clock, { maxKept: 3, maxAgeMs: 60_000 })
    const ids: string[] = []
    for (let i = 0; i < 4; i++) {
      const { contractId, result } = resultOf(`job-${i}`)
      ids.push(contractId)
      await kept.keep(contractId, req.peer, result)
      clock.advance(1000)
    }
    assert.equal(await kept.size(), 3)
    assert.equal(await kept.get(ids[0]), undefined, 'the oldest went first')
    clock.advance(60_000)
    const last = resultOf('job-9')
    await kept.keep(last.contractId, req.peer, last.result)
    assert.deepEqual(
      (await Promise.all([...ids, last.contractId].map((id) => kept.get(id)))).map((k) => k?.jobId),
      [undefined, undefined, undefined, undefined, 'job-9'],
      'older than a minute: dropped',
    )
  })
})
