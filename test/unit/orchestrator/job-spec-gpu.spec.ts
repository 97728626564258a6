/** A job asks which GPUs: `resources.gpuModel`, `resources.gpuMemory` (specs/job-spec.md). */
import assert from 'node:assert/strict'
import { InvalidJobSpecError, parseJobSpec } from '../../../dms/orchestrator/job-spec.js'
import { postedSpecOf } from '../../../dms/orchestrator/job-spec-posted.js'
import { workloadOfJob } from '../../../dms/orchestrator/job-workload.js'

const GiB = 1024 ** 3
const valid = (resources: object) => ({
  runtime: '/usr/bin/python3',
  command: ['/usr/bin/python3', '-c', 'print(1)'],
  resources: { cpu: 1, memory: '1GiB', ...resources },
  maxDuration: 60,
  maxPrice: 1000,
})
const refused = (input: unknown): InvalidJobSpecError => {
  try {
    parseJobSpec(input)
  } catch (err) {
    assert.ok(err instanceof InvalidJobSpecError)
    return err
  }
  assert.fail('expected a refusal')
}

describe('orchestrator/job-spec: GPU model and memory', () => {
  it('carries them into the workload the bid request and contract carry, and posts them back', () => {
    const spec = parseJobSpec(valid({ gpu: 1, gpuModel: 'H200', gpuMemory: '80GiB' }))
    assert.deepEqual(workloadOfJob(spec).members[0].resources.gpus, {
      count: 1,
      model: 'H200',
      minMemoryBytes: 80 * GiB,
    })
    const again = parseJobSpec(postedSpecOf(spec))
    assert.deepEqual(again.gpu, { model: 'H200', minMemoryBytes: 80 * GiB })
    assert.deepEqual(workloadOfJob(parseJobSpec(valid({ gpu: 2 }))).members[0].resources.gpus, { count: 2 })
  })

  it('refuses them without GPUs, in a pod, or a model of odd characters', () => {
    assert.equal(refused(valid({ gpuModel: 'H200' })).field, 'resources.gpuModel')
    assert.equal(refused(valid({ gpu: 0, gpuMemory: '1GiB' })).field, 'resources.gpuMemory')
    assert.match(refused(valid({ gpu: 1, gpuModel: 'H200\n' })).message, /gpuModel/)
    assert.match(refused(valid({ gpu: 1, gpuModel: 'x'.repeat(129) })).message, /gpuModel/)
    const pod = {
      members: [
        { name: 'a', image: 'dms-test:1', command: ['sh'], cpu: 0.5, memory: '64MiB' },
        { name: 'b', image: 'dms-test:1', command: ['sh'], cpu: 0.5, memory: '64MiB' },
      ],
      resources: { gpuModel: 'H200' },
      maxDuration: 60,
      maxPrice: 1000,
    }
    assert.equal(refused(pod).field, 'resources.gpuModel')
  })
})
