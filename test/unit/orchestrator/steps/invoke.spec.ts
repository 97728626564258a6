/**
 * The `invoking` step: the provider is granted the job's input blobs first, then sent the
 * invocation with the signed contract and the contract-db's proof; its allocation id is kept.
 */
import assert from 'node:assert/strict'
import { RemoteError } from '../../../../actors/errors.js'
import type { ContractProof } from '../../../../dms/contracts/model.js'
import { invokeStep } from '../../../../dms/orchestrator/steps/invoke.js'
import { W } from '../../../../dms/protocol/behaviours.js'
import { makeContract, newParty } from '../../../helpers/contracts.js'
import { CONFIG, jobRecord, never, outcome, stepDeps } from '../../../helpers/steps.js'

describe('orchestrator/steps/invoke', () => {
  const provider = newParty()
  const requester = newParty()
  const contract = makeContract(requester, provider, newParty().peer, { jobId: 'job-1' })
  const proof = { contractId: contract.terms.contractId } as ContractProof
  const inputs = [{ path: 'data/in.txt', sha256: 'a'.repeat(64), size: 3 }]
  const job = () => {
    const j = jobRecord({
      winner: { bidId: contract.terms.bidId, provider: provider.peer, why: 'only bid' },
      contract,
      proof,
    })
    j.spec.inputs = inputs
    j.spec.command = ['sh', '-c', 'cat /inputs/data/in.txt']
    j.spec.env = { A: '1' }
    return j
  }

  it('grants the inputs, then invokes with the contract and proof; keeps the allocation id', async () => {
    const f = stepDeps()
    f.actor.answer(W.invoke, () => {
      assert.deepEqual(
        f.blobs.granted,
        [{ provider: provider.peer, sha256: inputs[0].sha256 }],
        'granted first',
      )
      return { allocationId: 'alloc-7' }
    })
    assert.deepEqual(await invokeStep(f.deps)(job(), never()), { allocationId: 'alloc-7' })
    const [sent] = f.actor.sent
    assert.equal(sent.to?.peer, provider.peer)
    assert.equal(sent.opts?.timeoutMs, CONFIG.requestTimeoutMs)
    assert.deepEqual(sent.payload, {
      contract,
      proof,
      // What runs travels whole: the job's one member.
      workload: {
        members: [
          {
            name: 'main',
            artifact: { kind: 'image', ref: 'dms-test:1' },
            command: ['sh', '-c', 'cat /inputs/data/in.txt'],
            env: { A: '1' },
            network: 'none',
            resources: { cpu: 1, memoryBytes: 67108864 },
          },
        ],
      },
      inputs,
    })
  })

  it('a provider that does not take the invocation rejects (a provider fault, terminate.ts)', async () => {
    const f = stepDeps()
    f.actor.answer(W.invoke, () => {
      throw new RemoteError('NO_LOCK', 'no lock for this contract')
    })
    const { error } = await outcome(invokeStep(f.deps)(job(), never()))
    assert.equal((error as RemoteError).code, 'NO_LOCK')
  })
})
