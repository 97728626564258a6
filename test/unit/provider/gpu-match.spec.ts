import assert from 'node:assert/strict'
import { gpuAskOf, matchGpus, modelMatches } from '../../../dms/provider/gpu-match.js'
import { plainNeeds } from '../../helpers/needs.js'

const GiB = 1024 ** 3
const machine = {
  gpus: [
    { index: 0, vendor: 'NVIDIA', model: 'NVIDIA H200', memoryBytes: 141 * GiB },
    { index: 1, vendor: 'NVIDIA', model: 'NVIDIA H200', memoryBytes: 141 * GiB },
    { index: 2, vendor: 'NVIDIA', model: 'NVIDIA GeForce RTX 4090', memoryBytes: 24 * GiB },
  ],
}

describe('provider/gpu-match', () => {
  it('matches a model by its words in a row, case and spacing aside', () => {
    assert.equal(modelMatches('H200', 'NVIDIA H200'), true)
    assert.equal(modelMatches('nvidia  h200', 'NVIDIA H200'), true)
    assert.equal(modelMatches('RTX 4090', 'NVIDIA GeForce RTX 4090'), true)
    assert.equal(modelMatches('H20', 'NVIDIA H200'), false)
    assert.equal(modelMatches('H100', 'NVIDIA H200'), false)
    assert.equal(modelMatches('4090 RTX', 'NVIDIA GeForce RTX 4090'), false)
    assert.equal(modelMatches(' ', 'NVIDIA H200'), false)
  })

  it('keeps the offered GPUs of the model and memory asked', () => {
    assert.deepEqual(matchGpus({ count: 1, model: 'H200' }, [0, 1, 2], machine), { eligible: [0, 1] })
    assert.deepEqual(matchGpus({ count: 1, model: 'H200' }, [1, 2], machine), { eligible: [1] })
    assert.deepEqual(matchGpus({ count: 1, minMemoryBytes: 32 * GiB }, [2, 1], machine), { eligible: [1] })
    assert.deepEqual(matchGpus({ count: 3 }, [2, 1, 0], machine), { eligible: [0, 1, 2] })
    // Without a measurement a count still matches.
    assert.deepEqual(matchGpus({ count: 1 }, [0], undefined), { eligible: [0] })
  })

  it('declines fewer than asked with what is offered, and a model it cannot judge', () => {
    assert.deepEqual(matchGpus({ count: 2 }, [0], machine), {
      refusal: 'not enough gpus: need 2, offered 1',
    })
    assert.deepEqual(matchGpus({ count: 1, model: 'H100', minMemoryBytes: 80 * GiB }, [0, 1, 2], machine), {
      refusal:
        'gpu model: need 1 GPU of model "H100" with at least 80 GiB each; offered here: 2 × NVIDIA H200 141 GiB, 1 × NVIDIA GeForce RTX 4090 24 GiB',
    })
    assert.deepEqual(matchGpus({ count: 1, model: 'H200' }, [], machine), {
      refusal: 'gpu model: need 1 GPU of model "H200"; offered here: none',
    })
    assert.deepEqual(matchGpus({ count: 1, model: 'H200' }, [0], undefined), {
      refusal: 'gpu model: need 1 GPU of model "H200"; this provider has not measured its GPUs',
    })
  })

  it('reads the ask from the needs', () => {
    const r = { cpu: 1, memoryBytes: GiB }
    assert.equal(gpuAskOf(plainNeeds('dms-test:1', r)), undefined)
    const needs = plainNeeds('dms-test:1', { ...r, gpus: 2 })
    assert.deepEqual(gpuAskOf(needs), { count: 2 })
    needs.members[0].resources.gpus = { count: 1, model: 'H200', minMemoryBytes: GiB }
    assert.deepEqual(gpuAskOf(needs), { count: 1, model: 'H200', minMemoryBytes: GiB })
  })
})
