/**
 * The `contracting` step against a scripted provider and contract-db: the terms drafted from the
 * winning bid, the countersignature checked, losers released once the contract is active; the
 * fallback rules (a refusal before anything is locked tries the next bid, an unknown outcome does
 * not), and, with the job machine, a refused contract falling back to the next bid.
 */
import assert from 'node:assert/strict'
import { createActor, waitFor } from 'xstate'
import { DmsError, RemoteError, RequestTimeoutError, UnreachableError } from '../../../../actors/errors.js'
import { hashDoc, signDoc, verifyDoc } from '../../../../dms/contracts/canonical.js'
import { workloadOfJob } from '../../../../dms/orchestrator/job-workload.js'
import { workloadHash } from '../../../../dms/workload/hash.js'
import { ContractDbClient } from '../../../../dms/contract-clients/client.js'
import {
  DOMAIN,
  type ContractProof,
  type ContractTerms,
  type SignedContract,
  type Bid,
} from '../../../../dms/contracts/model.js'
import {
  ContractRefusal,
  createJobMachine,
  JobFailure,
  LockFirst,
} from '../../../../dms/orchestrator/job-machine.js'
import { closeContractStep, TERMS_TTL_MS } from '../../../../dms/orchestrator/steps/close-contract.js'
import type { JobRecord } from '../../../../dms/orchestrator/job-record.js'
import { requestLockStep } from '../../../../dms/orchestrator/steps/request-lock.js'
import { W } from '../../../../dms/protocol/behaviours.js'
import { handleOf, INBOX } from '../../../../dms/protocol/handles.js'
import type { BidRelease } from '../../../../dms/protocol/messages.js'
import { newParty, type Who } from '../../../helpers/contracts.js'
import {
  jobRecord,
  never,
  outcome,
  signedBid,
  stepDeps,
  T0,
  type FakeJobActor,
} from '../../../helpers/steps.js'

const p1 = newParty()
const p2 = newParty()
const cdbParty = newParty()

/** The provider countersigns whatever it is sent (with `who`'s key). */
const countersign = (actor: FakeJobActor, who: (peer: string) => Who) =>
  actor.answer(W.contractSign, ({ contract }, to) => ({
    providerSignature: signDoc(who(to.peer).key, DOMAIN.contract, contract.terms),
  }))

/** The contract-db's proof over `terms`, signed with `key`. */
const proofOf = (terms: ContractTerms, key = cdbParty.key): ContractProof => {
  const body = {
    contractId: terms.contractId,
    termsHash: hashDoc(terms),
    escrowLocked: terms.escrow,
    issuedAt: T0,
    contractDb: cdbParty.peer,
  }
  return { ...body, signature: signDoc(key, DOMAIN.proof, body) }
}

const byPeer = (peer: string) => (peer === p1.peer ? p1 : p2)

function setup() {
  const f = stepDeps()
  const bids = [
    signedBid(p1, 'job-1', { pricePerHour: 1000 }),
    signedBid(p2, 'job-1', { pricePerHour: 2000 }),
  ]
  const job = jobRecord({
    bids,
    winner: { bidId: bids[0].bidId, provider: p1.peer, why: 'best' },
    providerAddrs: { [p1.peer]: ['/ip4/127.0.0.1/tcp/1'], [p2.peer]: ['/ip4/127.0.0.1/tcp/2'] },
  })
  f.contractDb.verifyAnswer = (c) => ({ contractId: (c as SignedContract).terms.contractId })
  const released = () => f.actor.of(W.bidRelease).map((s) => (s.payload as BidRelease).bidId)
  return { f, bids, job, released }
}

/**
 * The job machine with the real lock and contract steps over `f`, bidding with `bids`, run until
 * it reaches `invoking` (every other step never ends): its snapshot then.
 */
async function contractedWithMachine(f: ReturnType<typeof stepDeps>, bids: Bid[], job: JobRecord) {
  const stop = (): Promise<never> => new Promise(() => undefined)
  const machine = createActor(
    createJobMachine(
      {
        waitUntilStart: stop,
        waitForCapacity: stop,
        collectBids: () => Promise.resolve({ bids }),
        requestLock: requestLockStep(f.deps),
        closeContract: closeContractStep(f.deps),
        invoke: stop,
        awaitResult: stop,
        verify: stop,
        settle: stop,
        cancel: stop,
      },
      f.clock,
    ),
    { input: { ...job, winner: undefined } },
  ).start()
  const snap = await waitFor(machine, (s) => s.value === 'invoking')
  machine.stop()
  return snap
}

describe('orchestrator/steps/close-contract', () => {
  it('drafts the terms from the winning bid, has them countersigned and verified, then releases the losers', async () => {
    const { f, bids, job, released } = setup()
    countersign(f.actor, byPeer)
    const { contract, proof } = await closeContractStep(f.deps)(job, never())
    const terms = contract!.terms
    assert.equal(terms.jobId, 'job-1')
    assert.equal(terms.bidId, bids[0].bidId)
    assert.equal(terms.provider.peer, p1.peer)
    assert.equal(terms.requester.peer, f.requester.peer)
    assert.equal(terms.contractDb, f.contractDb.peer)
    assert.equal(terms.escrow, bids[0].total)
    assert.equal(terms.expiresAt, T0 + TERMS_TTL_MS)
    // What runs is signed: the hash of the workload the invoke step sends (workloadOfJob).
    assert.equal(terms.workloadHash, workloadHash(workloadOfJob(job.spec)))
    assert.ok(verifyDoc(f.requester.key.publicKey, DOMAIN.contract, terms, contract!.requesterSignature))
    assert.ok(verifyDoc(p1.key.publicKey, DOMAIN.contract, terms, contract!.providerSignature!))
    assert.equal(proof?.contractId, terms.contractId)
    const [sign] = f.actor.of(W.contractSign)
    assert.equal(sign.to?.peer, p1.peer)
    assert.deepEqual(sign.to?.addrs, ['/ip4/127.0.0.1/tcp/1'], "the winner's address from the record")
    assert.deepEqual(released(), [bids[1].bidId], 'the loser is told, the winner is not')
  })

  it('restored in contracting: the same terms and contract id again (drafted at the state stamp)', async () => {
    const { f, job } = setup()
    countersign(f.actor, byPeer)
    const entered = { ...job, history: [...job.history, { state: 'contracting' as const, at: T0 + 500 }] }
    f.clock.advance(1000)
    const first = await closeContractStep(f.deps)(entered, never())
    f.clock.advance(5000) // the requester died and came back
    const again = await closeContractStep(f.deps)(entered, never())
    assert.equal(first.contract!.terms.createdAt, T0 + 500)
    assert.deepEqual(again.contract!.terms, first.contract!.terms)
    assert.deepEqual(
      f.contractDb.calls.map((c) => (c.req as SignedContract).terms.contractId),
      [first.contract!.terms.contractId, first.contract!.terms.contractId],
      'the same contract sent twice: the contract-db answers the stored proof',
    )
  })

  it('sends the terms only once the job is stored in contracting (a restore then finds them)', async () => {
    const { f, job } = setup()
    countersign(f.actor, byPeer)
    let stored!: () => void
    const written = new Promise<void>((r) => (stored = r))
    const step = closeContractStep({ ...f.deps, written: () => written })(job, never())
    await new Promise((r) => setImmediate(r))
    assert.equal(f.actor.of(W.contractSign).length, 0, 'nothing sent while the write is pending')
    stored()
    const { contract } = await step
    assert.equal(f.actor.of(W.contractSign).length, 1)
    assert.ok(contract?.providerSignature !== undefined)
  })

  it('a job that could not be stored fails JOB_NOT_STORED: nothing sent, its bid given up', async () => {
    const { f, bids, job, released } = setup()
    countersign(f.actor, byPeer)
    const full = () =>
      Promise.reject(new DmsError('JOB_NOT_STORED', 'job job-1 could not be stored (ENOSPC)'))
    const { error } = await outcome(closeContractStep({ ...f.deps, written: full })(job, never()))
    assert.ok(error instanceof JobFailure)
    assert.equal(error.code, 'JOB_NOT_STORED')
    assert.equal(f.actor.of(W.contractSign).length, 0, 'no terms sent')
    assert.deepEqual(released(), [bids[0].bidId])
  })

  it('the provider refuses or is silent: a ContractRefusal (next bid), the bid given up', async () => {
    for (const err of [
      new RemoteError('RESERVATION_EXPIRED', 'no reservation'),
      new RequestTimeoutError('/dms/contract/sign', 10_000),
    ]) {
      const { f, bids, job, released } = setup()
      f.actor.answer(W.contractSign, () => {
        throw err
      })
      const { error } = await outcome(closeContractStep(f.deps)(job, never()))
      assert.ok(error instanceof ContractRefusal)
      assert.equal(error.code, err.code)
      assert.deepEqual(error.bid, { provider: p1.peer, bidId: bids[0].bidId })
      assert.deepEqual(released(), [bids[0].bidId])
      assert.equal(f.contractDb.calls.length, 0, 'the contract-db never saw it')
    }
  })

  it('a provider without the folded lock (BID_NOT_LOCKED for the reserved bid): LockFirst, the bid kept', async () => {
    const { f, job, released } = setup()
    f.actor.answer(W.contractSign, () => {
      throw new RemoteError('BID_NOT_LOCKED', 'bid is offered')
    })
    const { error } = await outcome(closeContractStep(f.deps)(job, never()))
    assert.ok(error instanceof LockFirst)
    assert.equal(error.code, 'BID_NOT_LOCKED')
    assert.deepEqual(released(), [], 'not given up: it is locked next')
    assert.equal(f.contractDb.calls.length, 0)
    // Come back from `requesting` (locked by the job request), the same answer is a refusal.
    const history = [
      ...job.history,
      ...(['requesting', 'contracting'] as const).map((state) => ({ state, at: T0 })),
    ]
    const again = await outcome(closeContractStep(f.deps)({ ...job, history }, never()))
    assert.ok(again.error instanceof ContractRefusal)
    assert.equal(again.error.step, 'contract')
    assert.deepEqual(released(), [job.winner!.bidId])
  })

  it("the folded lock's refusals and silence are kept as the lock's; the terms' as the contract's", async () => {
    for (const [err, step] of [
      [new RemoteError('LOCK_FAILED', 'cannot lock resources'), 'lock'],
      [new RemoteError('BID_NOT_OPEN', 'bid is expired'), 'lock'],
      [new RequestTimeoutError('/dms/contract/sign', 10_000), 'lock'],
      [new RemoteError('TERMS_MISMATCH', 'contract terms do not match the bid'), 'contract'],
    ] as const) {
      const { f, job } = setup()
      f.actor.answer(W.contractSign, () => {
        throw err
      })
      const { error } = await outcome(closeContractStep(f.deps)(job, never()))
      assert.ok(error instanceof ContractRefusal)
      assert.equal(error.step, step, err.code)
    }
  })

  it('with the job machine: a provider without the folded lock gets the job request, then the terms again', async () => {
    const { f, bids, job } = setup()
    const locked = new Set<string>()
    f.actor.answer(W.jobRequest, ({ bidId }) => {
      locked.add(bidId)
      return { locked: true, lockedUntil: T0 + 60_000 }
    })
    // As a provider before the folded lock: terms only for a locked bid.
    f.actor.answer(W.contractSign, ({ contract }, to) => {
      if (!locked.has(contract.terms.bidId)) throw new RemoteError('BID_NOT_LOCKED', 'bid is offered')
      return { providerSignature: signDoc(byPeer(to.peer).key, DOMAIN.contract, contract.terms) }
    })
    const snap = await contractedWithMachine(f, bids, job)
    assert.equal(snap.context.contract?.terms.bidId, bids[0].bidId, 'the best bid, not the next one')
    assert.deepEqual(snap.context.history.map((h) => h.state).slice(-5), [
      'selecting',
      'contracting',
      'requesting',
      'contracting',
      'invoking',
    ])
    assert.deepEqual(
      f.actor.of(W.jobRequest).map((s) => s.to?.peer),
      [p1.peer],
    )
    assert.equal(f.actor.of(W.contractSign).length, 2)
    assert.equal(snap.context.refusals, undefined)
  })

  it('a countersignature by another key is refused before the contract-db is asked', async () => {
    const { f, job } = setup()
    countersign(f.actor, () => p2)
    const { error } = await outcome(closeContractStep(f.deps)(job, never()))
    assert.ok(error instanceof ContractRefusal)
    assert.equal(error.code, 'BAD_PROVIDER_SIGNATURE')
    assert.equal(f.contractDb.calls.length, 0)
  })

  it('the contract-db refuses (nothing locked): a ContractRefusal, the bid given up', async () => {
    const { f, bids, job, released } = setup()
    countersign(f.actor, byPeer)
    f.contractDb.verifyAnswer = () => {
      throw new RemoteError('INSUFFICIENT_FUNDS', 'balance 0 < escrow')
    }
    const { error } = await outcome(closeContractStep(f.deps)(job, never()))
    assert.ok(error instanceof ContractRefusal)
    assert.equal(error.code, 'INSUFFICIENT_FUNDS')
    assert.match(error.message, /contract-db refused the contract: balance 0/)
    assert.deepEqual(released(), [bids[0].bidId], 'given up; the losers keep theirs for the fallback')
  })

  it('an unknown outcome at the contract-db fails the job: no other bid is tried', async () => {
    for (const err of [
      new RequestTimeoutError('/dms/contract/verify', 10_000),
      new UnreachableError('cdb', new Error('refused')),
      new RemoteError('CONTRACT_EXISTS', 'already verified'),
    ]) {
      const { f, job, released } = setup()
      countersign(f.actor, byPeer)
      f.contractDb.verifyAnswer = () => {
        throw err
      }
      const { error } = await outcome(closeContractStep(f.deps)(job, never()))
      assert.ok(error instanceof JobFailure && !(error instanceof ContractRefusal), err.code)
      assert.equal(error.code, 'CONTRACT_REFUSED')
      assert.deepEqual(released(), [], 'nothing released: the escrow may be locked')
    }
  })

  it('a proof not signed by the contract-db fails the job BAD_PROOF (the real client checks it)', async () => {
    const { f, job } = setup()
    countersign(f.actor, byPeer)
    f.actor.answer(W.contractVerify, ({ contract }) => proofOf(contract.terms, p2.key))
    f.deps.contractDb = new ContractDbClient(
      { actor: f.actor, clock: f.clock },
      { contractDb: { peer: cdbParty.peer, addrs: [] } },
    )
    const { error } = await outcome(closeContractStep(f.deps)(job, never()))
    assert.ok(error instanceof JobFailure && !(error instanceof ContractRefusal))
    assert.equal(error.code, 'BAD_PROOF')
  })

  it('with the job machine: a refused contract falls back to the next bid, which is contracted', async () => {
    const { f, bids, job, released } = setup()
    // The cheaper provider refuses to countersign; the other one signs.
    f.actor.answer(W.contractSign, ({ contract }, to) => {
      if (to.peer === p1.peer) throw new RemoteError('LOCK_LOST', 'the lock is gone')
      return { providerSignature: signDoc(p2.key, DOMAIN.contract, contract.terms) }
    })
    const snap = await contractedWithMachine(f, bids, job)
    const ctx = snap.context
    assert.equal(ctx.winner?.provider, p2.peer)
    assert.equal(ctx.contract?.terms.bidId, bids[1].bidId)
    assert.deepEqual(ctx.tried, [bids[0].bidId])
    assert.deepEqual(
      ctx.refusals?.map((r) => [r.step, r.provider, r.code]),
      [['contract', p1.peer, 'LOCK_LOST']],
    )
    // Given up when refused, and told again as the round's loser once the contract is active.
    assert.deepEqual(released(), [bids[0].bidId, bids[0].bidId])
    assert.deepEqual(f.actor.of(W.jobRequest), [], 'the terms lock the reserved bids: no job request')
    assert.deepEqual(
      f.actor.of(W.contractSign).map((s) => s.to),
      [p1.peer, p2.peer].map((p, i) => handleOf(p, INBOX.provider, [`/ip4/127.0.0.1/tcp/${i + 1}`])),
    )
  })
})
