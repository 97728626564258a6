/**
 * `dms resources` / `dms onboard` show each offered engine (specs/executor.md, "Engines"): what it
 * runs when it answers, or why not (the operator's own machine: the local why belongs here).
 */
import assert from 'node:assert/strict'
import { renderResources } from '../../../dms/cli/resources.js'
import type { EngineCapabilities } from '../../../dms/executor/engine.js'
import type { ResourcesView } from '../../../dms/resources/onboarding.js'
import { ZERO } from '../../../dms/resources/types.js'

const docker: EngineCapabilities = {
  name: 'docker',
  version: '24.0.7',
  available: true,
  artifactKinds: ['image'],
  gpus: true,
  networkPolicies: ['none', 'open'],
  diskQuota: true,
  fetchesArtifacts: false,
}

function view(engines: EngineCapabilities[]): ResourcesView {
  return {
    status: 'not-onboarded',
    machine: {
      cpu: { cores: 2, model: 'Test CPU', arch: 'x64', speedGHz: 2.5 },
      memoryBytes: 1024,
      disk: { path: '/', totalBytes: 2048, freeBytes: 1024 },
      gpus: [],
      os: { platform: 'linux', distro: 'Debian', release: '12', kernel: '6.1' },
      engines,
      measuredAt: 0,
    },
    machineResources: ZERO,
    hostReserve: ZERO,
    maxOffer: ZERO,
    offer: null,
    onboarded: ZERO,
    free: ZERO,
    reserved: ZERO,
    locked: ZERO,
    allocated: ZERO,
    entries: [],
  }
}

const engineLines = (text: string): string[] => text.split('\n').filter((l) => /^engines? /.test(l))

describe('cli/resources: the engines', () => {
  it('prints one line per engine: what it runs, or why it cannot', () => {
    const down = { ...docker, name: 'process', available: false, why: 'no user namespaces' }
    assert.deepEqual(engineLines(renderResources(view([docker, down]))), [
      'engine    docker: available, version 24.0.7 (image; network none/open; gpus; disk quota)',
      'engine    process: unavailable (no user namespaces)',
    ])
  })

  it('says when no engine is offered', () => {
    assert.deepEqual(engineLines(renderResources(view([]))), ['engines   none offered'])
  })
})
