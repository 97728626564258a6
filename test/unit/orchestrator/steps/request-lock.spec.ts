/**
 * The `requesting` step: the job request goes to the winner's provider inbox, at the address it
 * bid from, for the winning bid, with the request timeout; a refusal rejects (the machine then
 * tries the next bid).
 */
import assert from 'node:assert/strict'
import { RemoteError } from '../../../../actors/errors.js'
import { requestLockStep } from '../../../../dms/orchestrator/steps/request-lock.js'
import { W } from '../../../../dms/protocol/behaviours.js'
import { handleOf, INBOX } from '../../../../dms/protocol/handles.js'
import { newParty } from '../../../helpers/contracts.js'
import { CONFIG, jobRecord, never, outcome, signedBid, stepDeps, T0 } from '../../../helpers/steps.js'

describe('orchestrator/steps/request-lock', () => {
  const provider = newParty()
  const bid = signedBid(provider, 'job-1')
  const job = jobRecord({
    bids: [bid],
    winner: { bidId: bid.bidId, provider: provider.peer, why: 'only bid' },
    providerAddrs: { [provider.peer]: ['/ip4/127.0.0.1/tcp/1'] },
  })

  it("asks the winner's provider inbox to lock the winning bid", async () => {
    const f = stepDeps()
    // This round's address (from its bid) wins over the one in the record.
    f.session.addBid(bid, handleOf(provider.peer, INBOX.provider, ['/ip4/127.0.0.1/tcp/2']))
    f.actor.answer(W.jobRequest, () => ({ locked: true, lockedUntil: T0 + 60_000 }))
    assert.deepEqual(await requestLockStep(f.deps)(job, never()), {})
    const [req] = f.actor.sent
    assert.equal(req.behaviour, W.jobRequest.name)
    assert.deepEqual(req.to, handleOf(provider.peer, INBOX.provider, ['/ip4/127.0.0.1/tcp/2']))
    assert.deepEqual(req.payload, { jobId: 'job-1', bidId: bid.bidId })
    assert.equal(req.opts?.timeoutMs, CONFIG.requestTimeoutMs)
  })

  it('after a restart (no bids in this session) the address kept in the record is used', async () => {
    const f = stepDeps()
    f.actor.answer(W.jobRequest, () => ({ locked: true, lockedUntil: T0 + 60_000 }))
    await requestLockStep(f.deps)(job, never())
    assert.deepEqual(f.actor.sent[0].to?.addrs, ['/ip4/127.0.0.1/tcp/1'])
  })

  it("a provider's refusal rejects with its code", async () => {
    const f = stepDeps()
    f.actor.answer(W.jobRequest, () => {
      throw new RemoteError('INSUFFICIENT_RESOURCES', 'the reservation lapsed')
    })
    const { error } = await outcome(requestLockStep(f.deps)(job, never()))
    assert.equal((error as RemoteError).code, 'INSUFFICIENT_RESOURCES')
  })
})
