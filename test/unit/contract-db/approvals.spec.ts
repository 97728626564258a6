/** The registry of approved entities on a real level in a temp dir: roles given, kept, changed, refused. */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ManualClock } from '../../../actors/clock.js'
import { Approvals } from '../../../dms/contract-db/approvals.js'
import type { ApprovedEntity } from '../../../dms/contract-db/records.js'
import { silentLogger } from '../../../dms/log.js'
import { openDb, Repo, type Db } from '../../../dms/store/db.js'
import { newParty } from '../../helpers/contracts.js'

describe('contract-db/approvals (roles)', () => {
  let dir: string
  let db: Db
  let repo: Repo<ApprovedEntity>
  let approvals: Approvals
  const clock = new ManualClock(1_800_000_000_000)

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dms-approvals-'))
    db = await openDb(join(dir, 'db'))
    repo = new Repo(db, 'cdb-approved')
    approvals = new Approvals(repo, { clock, log: silentLogger })
  })
  afterEach(async () => {
    await db.close()
    await rm(dir, { recursive: true, force: true })
  })

  it('approves as requester and provider by default; given roles replace them and keep the time', async () => {
    const p = newParty().peer
    const first = await approvals.approve(p)
    assert.deepEqual(first.roles, ['requester', 'provider'])
    clock.advance(1000)
    const again = await approvals.approve(p)
    assert.deepEqual([again.roles, again.approvedAt], [['requester', 'provider'], first.approvedAt])
    // Listed in their own order, once each, whatever order they were given in.
    const changed = await approvals.approve(p, ['relay', 'provider', 'relay'])
    assert.deepEqual([changed.roles, changed.approvedAt], [['provider', 'relay'], first.approvedAt])
    assert.deepEqual(await approvals.rolesOf(p), ['provider', 'relay'])
    // No roles given: the ones it has are kept.
    assert.deepEqual((await approvals.approve(p)).roles, ['provider', 'relay'])
    assert.equal(await approvals.rolesOf(newParty().peer), undefined)
  })

  it('reads an approval stored before roles as requester and provider', async () => {
    const p = newParty().peer
    await repo.put(p, { peer: p, approvedAt: 5 })
    assert.deepEqual(await approvals.rolesOf(p), ['requester', 'provider'])
  })

  it('refuses an unknown role or none, and stores nothing', async () => {
    const p = newParty().peer
    for (const roles of [['admin'], [], ['provider', 'root']]) {
      await assert.rejects(approvals.approve(p, roles), (err: { code: string; message: string }) => {
        assert.equal(err.code, 'BAD_ROLE')
        assert.match(err.message, /requester, provider, relay/)
        return true
      })
    }
    assert.equal(await approvals.rolesOf(p), undefined)
  })
})
