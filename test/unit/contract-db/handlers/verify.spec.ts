/**
 * The verify handler on fakes (approvals, accounts, contracts) and a manual clock: the checks in
 * the order of specs/contract-db.md, each refusal with its code, and nothing proposed unless all
 * of them pass.
 */
import assert from 'node:assert/strict'
import { ManualClock } from '../../../../actors/clock.js'
import type { ContractInput } from '../../../../dms/contract-db/contract-machine.js'
import { verifyHandler, type VerifyHandler } from '../../../../dms/contract-db/handlers/verify.js'
import type { Account, ContractRecord } from '../../../../dms/contract-db/records.js'
import { hashDoc, signDoc } from '../../../../dms/contracts/canonical.js'
import { DOMAIN, type Role, type SignedContract } from '../../../../dms/contracts/model.js'
import { silentLogger } from '../../../../dms/log.js'
import { refusal } from '../../../helpers/contract-db.js'
import { makeContract, newParty, sign } from '../../../helpers/contracts.js'

const T0 = 1_800_000_000_000
const cdb = newParty().peer

describe('contract-db/handlers/verify', () => {
  const req = newParty()
  const prov = newParty()
  let clock: ManualClock
  let approved: Set<string>
  let roles: Map<string, Role[]>
  let accounts: Map<string, Account>
  let stored: Map<string, ContractRecord>
  let proposed: ContractInput[]
  let verify: VerifyHandler
  let volunteers: Map<string, number>
  const contract = (o: Parameters<typeof makeContract>[3] = {}) =>
    makeContract(req, prov, cdb, { now: clock.now(), pricePerHour: 3600, maxDurationSeconds: 60, ...o })

  beforeEach(() => {
    clock = new ManualClock(T0)
    approved = new Set([req.peer, prov.peer])
    roles = new Map()
    accounts = new Map([[req.peer, { peer: req.peer, balance: 100, escrow: 0 }]])
    stored = new Map()
    proposed = []
    volunteers = new Map()
    verify = verifyHandler({
      self: cdb,
      clock,
      signProof: (body) => `proof:${hashDoc(body)}`,
      approvals: {
        rolesOf: (peer) =>
          Promise.resolve(approved.has(peer) ? (roles.get(peer) ?? ['requester', 'provider']) : undefined),
      },
      accounts: { get: (peer) => Promise.resolve(accounts.get(peer) ?? { peer, balance: 0, escrow: 0 }) },
      contracts: {
        get: (id) => Promise.resolve(stored.get(id)),
        propose: (input) => {
          proposed.push(input)
          return Promise.resolve({
            ...input,
            state: 'active',
            history: [{ state: 'active', at: clock.now() }],
          })
        },
        activeVolunteers: (peer) => Promise.resolve(volunteers.get(peer) ?? 0),
      },
      maxActiveVolunteers: 2,
      deadlines: { settleGraceMs: 600_000 },
      log: silentLogger,
    })
  })

  it('proposes a good contract to its machine and answers with the signed proof, stamped now', async () => {
    const c = contract()
    clock.advance(5000)
    const proof = await verify(req.peer, c)
    const body = {
      contractId: c.terms.contractId,
      termsHash: hashDoc(c.terms),
      escrowLocked: 60,
      issuedAt: T0 + 5000,
      settleBy: T0 + 5000 + 60_000 + 600_000, // the lock + max duration + the grace
      contractDb: cdb,
    }
    assert.deepEqual(proof, { ...body, signature: `proof:${hashDoc(body)}` })
    assert.deepEqual(proposed, [{ contract: c, proof, activatedAt: T0 + 5000, settleBy: body.settleBy }])
  })

  it("counts settleBy from the terms' startBy, and refuses a startBy passed or too far ahead", async () => {
    const c = contract({ startBy: T0 + 120_000 })
    clock.advance(5000)
    const proof = await verify(req.peer, c)
    // The run may start as late as startBy and last its max duration: settleBy >= startBy.
    assert.equal(proof.settleBy, T0 + 120_000 + 60_000 + 600_000)
    const passed = contract({ startBy: T0 + 6000 })
    clock.advance(1000) // now = startBy
    assert.equal((await refusal(verify(req.peer, passed))).code, 'START_DEADLINE_PASSED')
    // The bid's earliestStart is now; a startBy an hour and more after it is out of bounds (consistency.ts).
    const far = contract({ startBy: clock.now() + 3600_000 + 1 })
    assert.match((await refusal(verify(req.peer, far))).message, /startBy may be at most 3600 s/)
    assert.equal(proposed.length, 1)
  })

  it('refuses, in order and with its code, each contract that fails a check; proposes none', async () => {
    const c = contract()
    const cases: Array<[string, string, SignedContract | undefined, string, RegExp]> = [
      ['no terms', req.peer, undefined, 'BAD_TERMS', /no contract terms/],
      ['another contract-db', req.peer, makeContract(req, prov, prov.peer), 'WRONG_CONTRACT_DB', /another/],
      ['sent by the provider', prov.peer, c, 'NOT_A_PARTY', /only the requester/],
      [
        'a party key that is not its peer id',
        req.peer,
        sign(
          { ...c.terms, provider: { ...c.terms.provider, publicKey: c.terms.requester.publicKey } },
          req,
          prov,
        ),
        'BAD_PARTY_KEY',
        /provider key/,
      ],
      [
        'a forged requester signature',
        req.peer,
        { ...c, requesterSignature: signDoc(prov.key, DOMAIN.contract, c.terms) },
        'BAD_SIGNATURE',
        /requester signature/,
      ],
      [
        'no provider signature',
        req.peer,
        { ...c, providerSignature: undefined },
        'BAD_SIGNATURE',
        /provider/,
      ],
      [
        'terms that differ from the bid',
        req.peer,
        sign({ ...c.terms, pricePerHour: 1 }, req, prov),
        'BAD_TERMS',
        /price/,
      ],
      [
        "a workloadHash not of a hash's form",
        req.peer,
        sign({ ...c.terms, workloadHash: 'not a hash' }, req, prov),
        'BAD_TERMS',
        /workloadHash/,
      ],
      [
        'terms that sign no workload (an older requester)',
        req.peer,
        contract({ workloadHash: false }),
        'WORKLOAD_UNSIGNED',
        /sign no workload \(workloadHash\): the requester speaks an older protocol; upgrade it/,
      ],
    ]
    for (const [what, submitter, doc, code, why] of cases) {
      const r = await refusal(verify(submitter, doc))
      assert.equal(r.code, code, `${what}: ${r.message}`)
      assert.match(r.message, why, what)
    }
    approved.delete(prov.peer)
    const r = await refusal(verify(req.peer, c))
    assert.deepEqual([r.code, r.data], ['PARTY_NOT_APPROVED', { peer: prov.peer }])
    assert.deepEqual(proposed, [])
  })

  it('refuses a party approved, but not for its side of the contract (roles)', async () => {
    const c = contract()
    roles.set(prov.peer, ['requester'])
    const r = await refusal(verify(req.peer, c))
    assert.deepEqual([r.code, r.data], ['PARTY_ROLE_NOT_APPROVED', { peer: prov.peer, role: 'provider' }])
    roles.set(prov.peer, ['provider'])
    roles.set(req.peer, ['provider', 'relay'])
    const r2 = await refusal(verify(req.peer, c))
    assert.deepEqual([r2.code, r2.data], ['PARTY_ROLE_NOT_APPROVED', { peer: req.peer, role: 'requester' }])
    assert.deepEqual(proposed, [])
  })

  it('names a replay as such even once expired; an expired contract is refused on the clock', async () => {
    const c = contract({ expiresAt: T0 + 1000 })
    clock.advance(1000)
    assert.equal((await refusal(verify(req.peer, c))).code, 'CONTRACT_EXPIRED')
    stored.set(c.terms.contractId, { contract: c, state: 'settled' } as ContractRecord)
    assert.equal((await refusal(verify(req.peer, c))).code, 'CONTRACT_EXISTS')
    assert.deepEqual(proposed, [])
  })

  it('idempotent: the same terms from their requester get the stored proof back while active', async () => {
    const c = contract()
    const proof = await verify(req.peer, c)
    stored.set(c.terms.contractId, { contract: c, state: 'active', proof } as ContractRecord)
    clock.advance(120_000) // past expiresAt: the first send was in time
    assert.deepEqual(await verify(req.peer, c), proof)
    assert.equal(proposed.length, 1, 'locked once')
  })

  it('idempotent for a contract stored before the upgrade: its terms, which sign no workload, get its proof', async () => {
    const c = contract({ workloadHash: false })
    const proof = { contractId: c.terms.contractId } as ContractRecord['proof']
    stored.set(c.terms.contractId, { contract: c, state: 'active', proof } as ContractRecord)
    assert.deepEqual(await verify(req.peer, c), proof)
    assert.deepEqual(proposed, [])
  })

  it("no party occupies another's contract id: the id is derived from the requester and its draft", async () => {
    const c = contract()
    // The provider, asked to countersign, submits a volunteer contract of its own under that id.
    const own = makeContract(prov, prov, cdb, { now: clock.now(), pricePerHour: 0, minJobPrice: 0 })
    const squat = sign({ ...own.terms, contractId: c.terms.contractId }, prov, prov)
    const r = await refusal(verify(prov.peer, squat))
    assert.equal(r.code, 'BAD_TERMS')
    assert.match(r.message, /contractId is not the one derived/)
    // A random id is refused the same way; the requester's own contract goes through.
    assert.equal(
      (await refusal(verify(req.peer, sign({ ...c.terms, contractId: 'c-1' }, req, prov)))).code,
      'BAD_TERMS',
    )
    assert.equal((await verify(req.peer, c)).contractId, c.terms.contractId)
  })

  it('bounds the volunteer contracts a requester has active; paid ones are not counted', async () => {
    volunteers.set(req.peer, 2)
    const r = await refusal(verify(req.peer, contract({ pricePerHour: 0, minJobPrice: 0 })))
    assert.deepEqual([r.code, r.data], ['TOO_MANY_CONTRACTS', { limit: 2 }])
    assert.equal((await verify(req.peer, contract())).escrowLocked, 60)
  })

  it('refuses a requester short of the escrow with the shortfall; a volunteer needs no funds', async () => {
    accounts.set(req.peer, { peer: req.peer, balance: 45, escrow: 0 })
    const r = await refusal(verify(req.peer, contract()))
    assert.equal(r.code, 'INSUFFICIENT_FUNDS')
    assert.deepEqual(r.data, { shortfall: 15, balance: 45, escrow: 60 })
    accounts.clear()
    const volunteer = contract({ pricePerHour: 0, minJobPrice: 0 })
    assert.equal((await verify(req.peer, volunteer)).escrowLocked, 0)
    assert.equal(proposed.length, 1)
  })
})
