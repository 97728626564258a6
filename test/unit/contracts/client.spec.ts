/**
 * The contract-db client on a simulated clock against a fake actor (the contract-db's answers are
 * scripted, its documents really signed): which failures it sends again and after how long, which
 * it gives up on, and the checks on what the contract-db signs.
 */
import assert from 'node:assert/strict'
import { ManualClock } from '../../../actors/clock.js'
import type { BehaviourDef } from '../../../actors/codec.js'
import type { Handle } from '../../../actors/envelope.js'
import { isCode, RemoteError, RequestTimeoutError, UnreachableError } from '../../../actors/errors.js'
import type { RequestOptions } from '../../../actors/system.js'
import { issueApproval } from '../../../dms/contracts/approval.js'
import { hashDoc, signDoc } from '../../../dms/contracts/canonical.js'
import {
  BadApprovalError,
  BadProofError,
  BadSettlementError,
  ContractDbClient,
  type Requester,
} from '../../../dms/contract-clients/client.js'
import { DOMAIN, TERMINATION, type ContractProof, type Settlement } from '../../../dms/contracts/model.js'
import { W } from '../../../dms/protocol/behaviours.js'
import { BadPeerIdError } from '../../../dms/protocol/handles.js'
import { makeContract, makeSettle, newParty } from '../../helpers/contracts.js'

type Answer = (payload: unknown) => unknown

/** Answers each request with the next scripted answer (a value, or a thrown error); records them. */
class FakeActor implements Requester {
  readonly calls: Array<{
    to: Handle
    behaviour: string
    payload: unknown
    opts?: RequestOptions
    at: number
  }> = []
  /** Peers dropped for silence, and when. */
  readonly dropped: Array<{ peer: string; at: number }> = []
  constructor(
    private readonly clock: ManualClock,
    private readonly answers: Answer[],
  ) {}
  disconnect(peer: string): Promise<void> {
    this.dropped.push({ peer, at: this.clock.now() })
    return Promise.resolve()
  }
  request<Req, Rep>(
    to: Handle,
    behaviour: BehaviourDef<Req, Rep>,
    payload: Req,
    opts?: RequestOptions,
  ): Promise<Rep> {
    this.calls.push({ to, behaviour: behaviour.name, payload, opts, at: this.clock.now() })
    const answer = this.answers.shift()
    if (answer === undefined) return Promise.reject(new Error('no answer scripted'))
    try {
      return Promise.resolve(answer(payload) as Rep)
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)))
    }
  }
}

const fail =
  (err: Error): Answer =>
  () => {
    throw err
  }
const unreachable = () => fail(new UnreachableError('cdb', new Error('connection refused')))
const timeout = () => fail(new RequestTimeoutError('/dms/contract/settle', 10_000))

describe('dms/contract-clients/client (the contract-db client)', () => {
  const cdb = newParty()
  const requester = newParty()
  const provider = newParty()
  let clock: ManualClock

  beforeEach(() => {
    clock = new ManualClock(1_800_000_000_000)
  })

  const contract = () => makeContract(requester, provider, cdb.peer, { now: clock.now() })
  const proofFor = (c: ReturnType<typeof contract>, over: Partial<ContractProof> = {}, key = cdb.key) => {
    const body = {
      contractId: c.terms.contractId,
      termsHash: hashDoc(c.terms),
      escrowLocked: c.terms.escrow,
      issuedAt: clock.now(),
      contractDb: cdb.peer,
      ...over,
    }
    return { ...body, signature: signDoc(key, DOMAIN.proof, body) }
  }
  const settlementFor = (c: ReturnType<typeof contract>, paid: number, key = cdb.key): Settlement => {
    const body = {
      contractId: c.terms.contractId,
      outcome: 'settled' as const,
      paidToProvider: paid,
      refundedToRequester: c.terms.escrow - paid,
      billedSeconds: 10,
      settledAt: clock.now(),
      contractDb: cdb.peer,
    }
    return { ...body, signature: signDoc(key, DOMAIN.settlement, body) }
  }
  const client = (actor: FakeActor, init: { attempts?: number; timeoutMs?: number; addrs?: string[] } = {}) =>
    new ContractDbClient(
      { actor, clock },
      { contractDb: { peer: cdb.peer, addrs: init.addrs ?? ['/ip4/127.0.0.1/tcp/9'] }, ...init },
    )

  describe('failover between instances (one identity, several addresses)', () => {
    const two = ['/ip4/127.0.0.1/tcp/9', '/ip4/127.0.0.1/tcp/10']

    it('a silent instance is dropped and, with another address, the request goes again at once', async () => {
      const c = contract()
      const actor = new FakeActor(clock, [timeout(), () => proofFor(c)])
      const t0 = clock.now()
      const proof = await client(actor, { addrs: two }).verify(c)
      assert.equal(proof.contractId, c.terms.contractId)
      assert.deepEqual(actor.dropped, [{ peer: cdb.peer, at: t0 }], 'its connections dropped')
      assert.deepEqual(
        actor.calls.map((x) => [x.at - t0, x.to.addrs]),
        [
          [0, two],
          [0, two],
        ],
        'no backoff',
      )
    })

    it('with one address a silence waits the backoff, and a refused dial drops nothing', async () => {
      const c = contract()
      const actor = new FakeActor(clock, [timeout(), unreachable(), () => proofFor(c)])
      const t0 = clock.now()
      const p = client(actor).verify(c)
      await clock.advanceAsync(1000 + 2000)
      await p
      assert.deepEqual(
        actor.calls.map((x) => x.at - t0),
        [0, 1000, 3000],
      )
      assert.equal(actor.dropped.length, 1, 'only the silence drops')
    })

    it('every address failing: the last failure, with its code, after the attempts', async () => {
      const actor = new FakeActor(clock, [timeout(), timeout(), timeout()])
      const err = await client(actor, { addrs: two, attempts: 3 })
        .settle(makeSettle(contract(), requester, provider), contract().terms)
        .catch((e: unknown) => e)
      assert.ok(isCode(err, 'REQUEST_TIMEOUT'))
      assert.equal(actor.calls.length, 3)
      assert.equal(actor.dropped.length, 3)
    })

    it('a silent approval ask drops the instance too (its holder asks again later)', async () => {
      const actor = new FakeActor(clock, [timeout()])
      await assert.rejects(client(actor, { addrs: two }).approval(requester.peer), (e: unknown) =>
        isCode(e, 'REQUEST_TIMEOUT'),
      )
      assert.equal(actor.dropped.length, 1)
    })
  })

  describe('verify', () => {
    it('sends the contract to the contract-db inbox and returns its checked proof', async () => {
      const c = contract()
      const actor = new FakeActor(clock, [() => proofFor(c)])
      const proof = await client(actor, { timeoutMs: 2500 }).verify(c)
      assert.equal(proof.contractId, c.terms.contractId)
      const [call] = actor.calls
      assert.equal(call.behaviour, W.contractVerify.name)
      assert.deepEqual(call.payload, { contract: c })
      assert.equal(call.to.peer, cdb.peer)
      assert.equal(call.to.inbox, 'contract-db')
      assert.deepEqual(call.to.addrs, ['/ip4/127.0.0.1/tcp/9'])
      assert.equal(call.opts?.timeoutMs, 2500)
    })

    it('is sent again while the contract-db is unreachable, 1 s then 2 s later', async () => {
      const c = contract()
      const actor = new FakeActor(clock, [unreachable(), unreachable(), () => proofFor(c)])
      const t0 = clock.now()
      const p = client(actor).verify(c)
      await clock.advanceAsync(999)
      assert.equal(actor.calls.length, 1, 'not before its backoff')
      await clock.advanceAsync(1 + 2000)
      await p
      assert.deepEqual(
        actor.calls.map((x) => x.at - t0),
        [0, 1000, 3000],
      )
    })

    it('is sent again after a timeout (verify is idempotent: the stored proof comes back)', async () => {
      const c = contract()
      const actor = new FakeActor(clock, [timeout(), () => proofFor(c)])
      const p = client(actor).verify(c)
      await clock.advanceAsync(1000)
      assert.equal((await p).contractId, c.terms.contractId)
      assert.deepEqual(
        actor.calls.map((x) => x.payload),
        [{ contract: c }, { contract: c }],
        'the same contract',
      )
    })

    it('is not sent again after a refusal', async () => {
      const actor = new FakeActor(clock, [
        fail(new RemoteError('PARTY_NOT_APPROVED', 'provider not approved')),
        () => proofFor(contract()),
      ])
      await assert.rejects(client(actor).verify(contract()), (err: unknown) =>
        isCode(err, 'PARTY_NOT_APPROVED'),
      )
      assert.equal(actor.calls.length, 1)
    })

    it('gives up after its attempts with the last failure', async () => {
      const actor = new FakeActor(clock, [unreachable(), unreachable()])
      const p = client(actor, { attempts: 2 }).verify(contract())
      const seen = p.catch((err: unknown) => err)
      await clock.advanceAsync(1000)
      assert.ok(isCode(await seen, 'UNREACHABLE'))
      assert.equal(actor.calls.length, 2)
    })

    it('refuses a proof not signed by the contract-db, or for other terms', async () => {
      const c = contract()
      const forged = new FakeActor(clock, [() => proofFor(c, {}, newParty().key)])
      await assert.rejects(client(forged).verify(c), (err: unknown) => {
        assert.ok(err instanceof BadProofError)
        assert.equal(err.code, 'BAD_PROOF')
        assert.equal(err.message, 'proof of contract is not signed by the contract-db')
        return true
      })
      for (const over of [
        { escrowLocked: c.terms.escrow + 1 },
        { termsHash: hashDoc({ other: 1 }) },
        { contractId: 'another' },
      ]) {
        const actor = new FakeActor(clock, [() => proofFor(c, over)])
        await assert.rejects(client(actor).verify(c), {
          name: 'BadProofError',
          message: 'proof of contract is for other terms',
        })
      }
    })

    it('an abort while it waits to send again rejects with the abort reason, and nothing more is sent', async () => {
      const actor = new FakeActor(clock, [unreachable(), () => proofFor(contract())])
      const ac = new AbortController()
      const p = client(actor).verify(contract(), { signal: ac.signal })
      await clock.advanceAsync(500)
      ac.abort(new Error('job cancelled'))
      await assert.rejects(p, /job cancelled/)
      await clock.advanceAsync(10_000)
      assert.equal(actor.calls.length, 1)
    })
  })

  describe('settle and terminate', () => {
    it('settle is sent again while the contract-db is unreachable or silent, 1 s, 2 s, 4 s apart', async () => {
      const c = contract()
      const req = makeSettle(c, requester, provider)
      const actor = new FakeActor(clock, [
        unreachable(),
        timeout(),
        unreachable(),
        () => settlementFor(c, 30),
      ])
      const t0 = clock.now()
      const p = client(actor).settle(req, c.terms)
      await clock.advanceAsync(7000)
      const s = await p
      assert.equal(s.paidToProvider, 30)
      assert.deepEqual(
        actor.calls.map((x) => [x.behaviour, x.at - t0]),
        [
          [W.settle.name, 0],
          [W.settle.name, 1000],
          [W.settle.name, 3000],
          [W.settle.name, 7000],
        ],
      )
    })

    it('a contract already closed yields the settlement the contract-db kept', async () => {
      const c = contract()
      const kept = settlementFor(c, 42)
      const actor = new FakeActor(clock, [
        fail(
          new RemoteError('CONTRACT_NOT_ACTIVE', 'already settled', { state: 'settled', settlement: kept }),
        ),
      ])
      assert.deepEqual(await client(actor).settle(makeSettle(c, requester, provider), c.terms), kept)
    })

    it('CONTRACT_NOT_ACTIVE without a settlement, or another refusal, rejects at once', async () => {
      const c = contract()
      for (const code of ['CONTRACT_NOT_ACTIVE', 'BAD_RECEIPT']) {
        const actor = new FakeActor(clock, [fail(new RemoteError(code, 'no')), () => settlementFor(c, 1)])
        await assert.rejects(client(actor).settle(makeSettle(c, requester, provider), c.terms), { code })
        assert.equal(actor.calls.length, 1)
      }
    })

    it('refuses a settlement of another signer, another contract, or not splitting the escrow', async () => {
      const c = contract()
      const other = contract()
      const bad = [
        settlementFor(c, 10, newParty().key),
        settlementFor(other, 10),
        { ...settlementFor(c, 10), refundedToRequester: 0 },
      ]
      for (const s of bad) {
        const actor = new FakeActor(clock, [() => s])
        await assert.rejects(
          client(actor).terminate(
            { contractId: c.terms.contractId, reason: TERMINATION.providerFault },
            c.terms,
          ),
          (err: unknown) => {
            assert.ok(err instanceof BadSettlementError)
            assert.equal(err.code, 'BAD_SETTLEMENT')
            return true
          },
        )
      }
    })

    it('terminate retries and checks as settle does', async () => {
      const c = contract()
      const actor = new FakeActor(clock, [timeout(), () => ({ ...settlementFor(c, 0) })])
      const p = client(actor).terminate(
        { contractId: c.terms.contractId, reason: TERMINATION.providerFault, detail: 'silent' },
        c.terms,
      )
      await clock.advanceAsync(1000)
      assert.equal((await p).contractId, c.terms.contractId)
      assert.equal(actor.calls[1].behaviour, W.terminate.name)
      assert.deepEqual(actor.calls[1].payload, {
        contractId: c.terms.contractId,
        reason: 'PROVIDER_FAULT',
        detail: 'silent',
      })
    })
  })

  describe('approval', () => {
    it('returns a credential for this node from this contract-db, checked; asked once', async () => {
      const good = issueApproval(cdb.key, { peer: requester.peer, contractDb: cdb.peer, now: clock.now() })
      const actor = new FakeActor(clock, [() => good])
      assert.deepEqual(await client(actor).approval(requester.peer), good)
      assert.equal(actor.calls[0].behaviour, W.approval.name)

      const forOther = issueApproval(cdb.key, { peer: provider.peer, contractDb: cdb.peer, now: clock.now() })
      const expired = issueApproval(cdb.key, {
        peer: requester.peer,
        contractDb: cdb.peer,
        now: clock.now() - 3_600_000,
      })
      for (const [cred, why] of [
        [forOther, 'approval_other_peer'],
        [expired, 'approval_expired'],
      ] as const) {
        const a = new FakeActor(clock, [() => cred, () => good])
        await assert.rejects(client(a).approval(requester.peer), (err: unknown) => {
          assert.ok(err instanceof BadApprovalError)
          assert.equal(err.message, `the contract-db sent a bad credential: ${why}`)
          return true
        })
        assert.equal(a.calls.length, 1)
      }
    })
  })

  it('a contract-db named by a peer id without an Ed25519 key is refused clearly, nothing sent', async () => {
    const actor = new FakeActor(clock, [])
    const bad = new ContractDbClient({ actor, clock }, { contractDb: { peer: 'not-a-peer', addrs: [] } })
    await assert.rejects(bad.verify(contract()), BadPeerIdError)
    assert.equal(actor.calls.length, 0)
  })
})
