/**
 * Which engine runs a job (dms/provider/engine-choice.ts): the first offered engine that runs the
 * job's artifact kind with its GPUs and network and answers now; else a reason that names engines
 * only.
 */
import assert from 'node:assert/strict'
import type { EngineCapabilities } from '../../../dms/executor/engine.js'
import { declineKind } from '../../../dms/provider/capability.js'
import { chooseEngine } from '../../../dms/provider/engine-choice.js'

const docker: EngineCapabilities = {
  name: 'docker',
  version: '24.0',
  available: true,
  artifactKinds: ['image'],
  gpus: true,
  networkPolicies: ['none', 'open'],
  diskQuota: true,
  fetchesArtifacts: false,
}
const processEngine: EngineCapabilities = {
  ...docker,
  name: 'process',
  artifactKinds: ['bundle', 'image'],
  gpus: false,
  networkPolicies: ['none'],
}
const plain = { artifactKind: 'image' as const, gpus: 0, network: false }

describe('provider/engine-choice', () => {
  it('picks the first offered engine that fits, in config order', () => {
    assert.deepEqual(chooseEngine([processEngine, docker], plain), { engine: 'process' })
    assert.deepEqual(chooseEngine([docker, processEngine], plain), { engine: 'docker' })
  })

  it('skips an engine without the GPUs or network a job asks for', () => {
    assert.deepEqual(chooseEngine([processEngine, docker], { ...plain, gpus: 1 }), { engine: 'docker' })
    assert.deepEqual(chooseEngine([processEngine, docker], { ...plain, network: true }), { engine: 'docker' })
    assert.deepEqual(chooseEngine([docker], { ...plain, artifactKind: 'bundle' }), {
      refusal: 'no engine here runs a bundle',
      unavailable: [],
    })
    const none = chooseEngine([processEngine], { ...plain, gpus: 2, network: true })
    assert.equal('refusal' in none && none.refusal, 'no engine here runs an image with GPUs and a network')
  })

  it('skips an unavailable engine, and names it (never its local why) when no other fits', () => {
    const down = { ...docker, available: false, why: 'connect ENOENT /var/run/docker.sock' }
    assert.deepEqual(chooseEngine([down, processEngine], plain), { engine: 'process' })
    const choice = chooseEngine([down], plain)
    assert.ok('refusal' in choice)
    assert.equal(choice.refusal, 'engine docker unavailable')
    assert.deepEqual(choice.unavailable, [down])
    assert.equal(declineKind(choice.refusal), 'engine unavailable')
    const both = chooseEngine([down, { ...processEngine, available: false }], plain)
    assert.equal('refusal' in both && both.refusal, 'engines docker, process unavailable')
    assert.equal(declineKind('no engine here runs a bundle'), 'no engine')
  })

  it('offers nothing with no engine measured', () => {
    assert.deepEqual(chooseEngine([], plain), { refusal: 'no engine here runs an image', unavailable: [] })
  })
})
