/**
 * The engine router's choices (dms/executor/router.ts), over stand-in engines (named as such: two
 * engines that fit one workload, or one that does not answer, cannot be made on demand from the
 * real ones; test/e2e/executor/engine-router.spec.ts runs the real two).
 */
import assert from 'node:assert/strict'
import type { Engine, EngineCapabilities, EngineRun } from '../../../dms/executor/engine.js'
import type { ExecutionResult, ExecutionSpec } from '../../../dms/executor/executor.js'
import { notStarted } from '../../../dms/executor/outputs.js'
import { EngineRouter } from '../../../dms/executor/router.js'
import { silentLogger } from '../../../dms/log.js'

/** A stand-in engine: says what it runs, records what it was asked. */
function standIn(name: string, can: Partial<EngineCapabilities>, runs: EngineRun[] | Error = []) {
  const calls: string[] = []
  const engine: Engine = {
    capabilities: () =>
      Promise.resolve({
        name,
        available: true,
        artifactKinds: ['image'],
        gpus: false,
        networkPolicies: ['none'],
        diskQuota: false,
        fetchesArtifacts: false,
        ...can,
      }),
    hasArtifact: (a) => Promise.resolve(can.artifactKinds?.includes(a.kind) ?? a.kind === 'image'),
    run: (s): Promise<ExecutionResult> => {
      calls.push(`run ${s.allocationId}`)
      return Promise.resolve(notStarted('completed', 0, name))
    },
    listRuns: () => (runs instanceof Error ? Promise.reject(runs) : Promise.resolve(runs)),
    reattach: (s) => {
      calls.push(`reattach ${s.allocationId}`)
      return Promise.resolve(notStarted('completed', 0, name))
    },
    removeAllocation: (id) => {
      calls.push(`remove ${id}`)
      return Promise.resolve()
    },
  }
  return { engine, calls }
}

const spec = (allocationId: string, kind: 'image' | 'runtime' = 'image'): ExecutionSpec => ({
  jobId: 'j',
  allocationId,
  timeoutSeconds: 10,
  workload: {
    members: [
      {
        name: 'main',
        artifact: kind === 'image' ? { kind, ref: 'x:1' } : { kind, path: '/bin/sh' },
        command: kind === 'image' ? ['sh'] : ['/bin/sh'],
        env: {},
        network: 'none',
        resources: { cpu: 1, memoryBytes: 64 * 1024 * 1024 },
      },
    ],
  },
})

describe('executor/router: the engine router', () => {
  it('sends each workload to the first engine that runs its artifact kind', async () => {
    const images = standIn('images', {})
    const runtimes = standIn('runtimes', { artifactKinds: ['runtime'] })
    const router = new EngineRouter({ engines: [images.engine, runtimes.engine], log: silentLogger })
    assert.equal((await router.run(spec('a', 'runtime'))).reason, 'runtimes')
    assert.equal((await router.run(spec('b', 'image'))).reason, 'images')
    assert.deepEqual([images.calls, runtimes.calls], [['run b'], ['run a']])
  })

  it('of two engines that fit, prefers one that answers; with none answering, the first (its error is the run)', async () => {
    const down = standIn('down', { available: false, why: 'no socket' })
    const up = standIn('up', {})
    const router = new EngineRouter({ engines: [down.engine, up.engine], log: silentLogger })
    assert.equal((await router.run(spec('a'))).reason, 'up')
    const alone = new EngineRouter({ engines: [down.engine], log: silentLogger })
    assert.equal((await alone.run(spec('b'))).reason, 'down')
  })

  it('re-attaches through the engine that listed the run, and removes from it only', async () => {
    const run = (allocationId: string): EngineRun => ({
      allocationId,
      jobId: 'j',
      handle: 'h',
      running: true,
    })
    const a = standIn('a', {}, [run('one')])
    const b = standIn('b', {}, [run('two')])
    const router = new EngineRouter({ engines: [a.engine, b.engine], log: silentLogger })
    assert.deepEqual(
      (await router.listRuns()).map((r) => r.allocationId),
      ['one', 'two'],
    )
    // Both fit an image: without the listing the first would be asked.
    assert.equal((await router.reattach(spec('two'))).reason, 'b')
    await router.removeAllocation('one')
    assert.deepEqual([a.calls, b.calls], [['remove one'], ['reattach two']])
    await router.removeAllocation('unknown')
    assert.deepEqual(
      [a.calls.at(-1), b.calls.at(-1)],
      ['remove unknown', 'remove unknown'],
      'unlisted: every engine',
    )
  })

  it('does not list runs while an engine does not answer (a restart must not take "unlisted" for "never started")', async () => {
    const a = standIn('a', {}, [])
    const b = standIn('b', {}, new Error('engine down'))
    const router = new EngineRouter({ engines: [a.engine, b.engine], log: silentLogger })
    await assert.rejects(router.listRuns(), /engine down/)
  })
})
