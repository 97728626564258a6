/** The invoke handler: a checked invocation allocates the ledger entry and starts the run. */
import assert from 'node:assert/strict'
import { waitFor } from 'xstate'
import { Harness } from '../../../helpers/provider-harness.js'
import { invokeHandler } from '../../../../dms/provider/handlers/invoke.js'
import { contracted, handlers } from './flow.js'

describe('provider/handlers/invoke', () => {
  let h: Harness
  beforeEach(async () => {
    h = await new Harness().start()
  })
  afterEach(() => h.close())

  it('allocates and starts the run of a contracted bid with a good proof', async () => {
    const { bid, contract } = await contracted(h)
    const { allocationId } = await handlers(h).invoke(h.msg(h.invocation(contract)))
    assert.equal(h.ledger.entries()[0].state, 'allocated')
    const run = h.fakes.runs.get(allocationId)!
    assert.deepEqual(run.input.allocation.command, ['sh', '-c', 'echo hi'])
    assert.equal((await h.book.get(bid.bidId))?.state, 'provisioning')
    // The same contract again (a requester restored in `invoking`): the same allocation, one run.
    assert.deepEqual(await handlers(h).invoke(h.msg(h.invocation(contract))), { allocationId })
    assert.equal(h.fakes.runs.size, 1)
    const inv = h.invocation(contract)
    await assert.rejects(handlers(h).invoke(h.msg({ ...inv, proof: { ...inv.proof, escrowLocked: 0 } })), {
      code: 'BAD_PROOF',
    })
  })

  it('refuses a proof not signed by the trusted contract-db, and a command the executor cannot run', async () => {
    const { contract } = await contracted(h)
    const inv = h.invocation(contract)
    await assert.rejects(handlers(h).invoke(h.msg({ ...inv, proof: { ...inv.proof, escrowLocked: 0 } })), {
      code: 'BAD_PROOF',
    })
    await assert.rejects(handlers(h).invoke(h.msg({ ...inv, command: [] })), { code: 'BAD_INVOCATION' })
    const other = { ...contract, terms: { ...contract.terms, contractId: 'another-contract' } }
    await assert.rejects(handlers(h).invoke(h.msg({ ...inv, contract: other })), {
      code: 'NOT_CONTRACTED',
    })
    assert.equal(h.ledger.entries()[0].state, 'locked', 'nothing allocated')
  })

  it('refuses an invocation asking for the network unless the provider allows it; carries it when allowed', async () => {
    const { contract } = await contracted(h)
    const inv = { ...h.invocation(contract), network: true }
    await assert.rejects(handlers(h).invoke(h.msg(inv)), {
      code: 'BAD_INVOCATION',
      message: 'network not allowed here: the job asks for network access',
    })
    assert.equal(h.ledger.entries()[0].state, 'locked', 'nothing allocated')
    const allowing = invokeHandler({ book: h.book, contractDb: h.contractDb.peer, allowNetwork: true })
    const { allocationId } = await allowing(h.msg(inv))
    assert.equal(h.fakes.runs.get(allocationId)!.input.allocation.network, true)
  })

  it('refuses the invocation of a contract its requester cancelled first', async () => {
    const { contract } = await contracted(h)
    const actor = h.book.byContractId(contract.terms.contractId)!.live!
    actor.send({ type: 'CANCEL', reason: 'cancelled by the requester' })
    await assert.rejects(handlers(h).invoke(h.msg(h.invocation(contract))), { code: 'CANCELLED' })
    await waitFor(actor, (s) => s.status === 'done')
    assert.deepEqual(h.ledger.entries(), [], 'released at the cancel')
    await assert.rejects(handlers(h).invoke(h.msg(h.invocation(contract))), { code: 'CANCELLED' })
  })
})
