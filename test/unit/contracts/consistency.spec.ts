/**
 * "These terms are what was bid for", written once (dms/contracts/consistency.ts) and used by the
 * three parties: the requester (bids it ranks, terms it drafts), the provider (terms it
 * countersigns) and the contract-db (checks.ts, terms it verifies).
 */
import assert from 'node:assert/strict'
import { ManualClock } from '../../../actors/clock.js'
import type { Handle } from '../../../actors/envelope.js'
import { signDoc } from '../../../dms/contracts/canonical.js'
import { bidAskedProblem, bidTotalProblem, termsBidProblem } from '../../../dms/contracts/consistency.js'
import { DOMAIN, type ContractProof, type SignedContract, type Bid } from '../../../dms/contracts/model.js'
import { contractedFor, termsImage, termsMaxDuration, termsResources } from '../../../dms/contracts/terms.js'
import { closeContractStep } from '../../../dms/orchestrator/steps/close-contract.js'
import { JobSession } from '../../../dms/orchestrator/session.js'
import { ContractRefusal } from '../../../dms/orchestrator/job-machine.js'
import type { JobRecord } from '../../../dms/orchestrator/job-record.js'
import { parseJobSpec } from '../../../dms/orchestrator/job-spec.js'
import { makeContract, newParty } from '../../helpers/contracts.js'

const req = newParty()
const prov = newParty()
const cdb = newParty()

describe('dms/contracts/consistency', () => {
  // Terms of an earlier version: they copy the bid's resources, image and max duration.
  const c = makeContract(req, prov, cdb.peer, {
    pricePerHour: 3600,
    maxDurationSeconds: 60,
    minJobPrice: 10,
    copies: true,
  })
  const { bid } = c.terms

  it("terms of this version copy none of the bid's fields: they read the bid's, which a requester cannot change", () => {
    const { resources: _r, image: _i, maxDurationSeconds: _m, ...t } = c.terms
    assert.equal(termsBidProblem(t, bid), undefined)
    assert.deepEqual(contractedFor(t), {
      resources: bid.resources,
      image: bid.image,
      maxDurationSeconds: bid.maxDurationSeconds,
    })
    assert.equal(termsResources(t), bid.resources)
    assert.equal(termsImage(t), 'dms-test:1')
    assert.equal(termsMaxDuration(t), 60)
    // Stored terms of an earlier version read their signed copies, which equal the bid's.
    assert.deepEqual(contractedFor(c.terms), contractedFor(t))
    // The bid's own max duration must be whole seconds: there is no copy left to check it on.
    assert.match(termsBidProblem(t, { ...bid, maxDurationSeconds: 0 }) ?? '', /positive whole number/)
    assert.match(termsBidProblem(t, { ...bid, maxDurationSeconds: 1.5 }) ?? '', /positive whole number/)
  })

  it('terms agree with their bid field by field, and lock exactly its total', () => {
    assert.equal(termsBidProblem(c.terms, bid), undefined)
    const cases: Array<[Partial<typeof c.terms>, RegExp]> = [
      [{ provider: { ...c.terms.provider, peer: req.peer } }, /another provider/],
      [{ bidId: 'other' }, /bid id other differs/],
      [{ jobId: 'other' }, /job other differs/],
      [{ image: 'other:1' }, /image other:1 differs/],
      [{ resources: { ...bid.resources, cpu: 2 } }, /resources differ/],
      [{ pricePerHour: 7200 }, /price 7200\/hour differs/],
      [{ maxDurationSeconds: 0 }, /max duration 0s differs/],
      [{ maxDurationSeconds: 61 }, /max duration 61s differs/],
      [{ escrow: c.terms.escrow + 1 }, /escrow \d+ must equal price × max duration/],
    ]
    for (const [over, why] of cases) assert.match(termsBidProblem({ ...c.terms, ...over }, bid) ?? '', why)
    // startBy: optional (dms 0.1), else after max(createdAt, earliestStart) and at most an hour later.
    const base = Math.max(c.terms.createdAt, bid.earliestStart)
    assert.equal(termsBidProblem({ ...c.terms, startBy: base + 3600_000 }, bid), undefined)
    for (const [startBy, why] of [
      [base, /startBy must be after/],
      [base + 3600_001, /at most 3600 s/],
      [base + 0.5, /whole number/],
    ] as const)
      assert.match(termsBidProblem({ ...c.terms, startBy }, bid) ?? '', why)
    const inflated: Bid = { ...bid, total: bid.total + 5 }
    assert.match(termsBidProblem({ ...c.terms, escrow: inflated.total }, inflated) ?? '', /bid's total/)
  })

  it('a bid is for exactly what was asked, and its total is price × max duration at least the minimum', () => {
    const asked = { image: bid.image, maxDurationSeconds: 60, resources: bid.resources }
    assert.equal(bidAskedProblem(bid, asked), undefined)
    assert.match(bidAskedProblem(bid, { ...asked, image: 'x:1' }) ?? '', /image/)
    assert.match(bidAskedProblem(bid, { ...asked, maxDurationSeconds: 30 }) ?? '', /max duration/)
    assert.match(
      bidAskedProblem(bid, { ...asked, resources: { ...asked.resources, gpus: 1 } }) ?? '',
      /resources/,
    )
    assert.equal(bidTotalProblem(bid), undefined)
    assert.match(bidTotalProblem({ ...bid, total: 1 }) ?? '', /not price × max duration/)
    assert.match(bidTotalProblem({ ...bid, pricePerHour: -1 }) ?? '', /bid: price per hour/)
  })

  describe('the requester drafts only terms the contract-db would accept', () => {
    /** The contracting step over fakes: a provider that countersigns, a contract-db that verifies. */
    function step(winning: Bid) {
      const clock = new ManualClock()
      const sent: string[] = []
      const released: string[] = []
      const job = {
        id: winning.jobId,
        spec: parseJobSpec({
          image: winning.image,
          command: ['true'],
          resources: { cpu: 1, memory: '64MiB' },
          maxDuration: winning.maxDurationSeconds,
          maxPrice: 1_000_000,
        }),
        createdAt: 0,
        history: [],
        bids: [winning],
        declines: [],
        tried: [],
        updates: [],
        winner: { bidId: winning.bidId, provider: winning.provider, why: 'best' },
      } as JobRecord
      const run = closeContractStep({
        actor: {
          request: (_to: Handle, b: { name: string }, p: { contract: SignedContract }) => {
            sent.push(b.name)
            return Promise.resolve({
              providerSignature: signDoc(prov.key, DOMAIN.contract, p.contract.terms),
            })
          },
          // Giving a bid up tells its bidder (`/dms/job/bid-release`).
          send: (_to: Handle, _b: { name: string }, p: { bidId: string }) => {
            released.push(p.bidId)
            return Promise.resolve()
          },
        } as never,
        session: new JobSession(clock),
        key: req.key,
        clock,
        peerId: req.peer,
        contractDb: {
          peer: cdb.peer,
          verify: (contract: SignedContract) => {
            sent.push('verify')
            return Promise.resolve({ contractId: contract.terms.contractId } as ContractProof)
          },
        },
        config: { requestTimeoutMs: 1000, startGraceSeconds: 120 } as never,
      })
      return { result: run(job, new AbortController().signal), sent, released }
    }

    it('a winning bid whose total is not price × max duration is given up before anything is sent', async () => {
      const bad: Bid = { ...bid, total: bid.total + 1 }
      const { result, sent, released } = step(bad)
      await assert.rejects(result, (err: unknown) => {
        assert.ok(err instanceof ContractRefusal)
        assert.equal(err.code, 'BAD_TERMS')
        assert.match(err.message, /the drafted terms do not match the bid: the bid's total/)
        return true
      })
      assert.deepEqual(sent, [], 'neither the provider nor the contract-db is asked')
      assert.deepEqual(released, [bad.bidId], 'the bid is given up: the next one is tried')
    })

    it('a consistent bid is countersigned by the provider, then verified by the contract-db', async () => {
      const { result, sent } = step(bid)
      const { contract, proof } = await result
      assert.deepEqual(sent, ['/dms/contract/sign', 'verify'])
      assert.equal(termsBidProblem(contract!.terms, bid), undefined)
      // The terms reference the bid and copy none of what it is for (specs/protocol.md).
      for (const copy of ['resources', 'image', 'maxDurationSeconds', 'pricePerHour'])
        assert.ok(!(copy in contract!.terms), `the drafted terms carry no ${copy}`)
      assert.deepEqual(contractedFor(contract!.terms).resources, bid.resources)
      assert.equal(proof?.contractId, contract?.terms.contractId)
    })

    it('startBy is the start grace after the bid earliestStart, a later one too (a busy provider)', async () => {
      for (const earliestStart of [bid.earliestStart, bid.earliestStart + 600_000]) {
        const later = { ...bid, earliestStart }
        const { contract } = await step(later).result
        assert.equal(contract!.terms.startBy, Math.max(contract!.terms.createdAt, earliestStart) + 120_000)
        assert.equal(termsBidProblem(contract!.terms, later), undefined)
      }
    })
  })
})
