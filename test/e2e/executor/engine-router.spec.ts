/**
 * The engine router over the two real engines (specs/executor.md, "Engines"): an image goes to
 * Docker and a runtime to the process engine, side by side, each chosen by what the engine says it
 * runs; a workload neither runs is refused before either is asked to run it.
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DockerExecutor } from '../../../dms/executor/docker/docker-executor.js'
import type { ExecutionEvent, ExecutionSpec } from '../../../dms/executor/executor.js'
import { ProcessEngine } from '../../../dms/executor/process/process-engine.js'
import { EngineRouter } from '../../../dms/executor/router.js'
import { silentLogger } from '../../../dms/log.js'
import type { Artifact } from '../../../dms/workload/workload.js'

const MiB = 1024 * 1024

describe('engine router (real Docker and the real process engine)', function () {
  this.timeout(60_000)
  let dir: string
  let router: EngineRouter

  before(async () => {
    execFileSync('bash', ['scripts/build-test-image.sh'], { stdio: 'inherit' })
    dir = await mkdtemp(join(tmpdir(), 'dms-router-'))
    const docker = new DockerExecutor(
      { log: silentLogger },
      { workDir: join(dir, 'docker'), owner: 'router-test' },
    )
    const processes = new ProcessEngine(
      { log: silentLogger },
      { workDir: join(dir, 'process'), cgroupParent: 'dms-test', runtimes: ['/bin/sh'] },
    )
    router = new EngineRouter({ engines: [docker, processes], log: silentLogger })
  })
  after(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true })
  })

  const spec = (id: string, artifact: Artifact, command: string[], network = false): ExecutionSpec => ({
    jobId: `job-${id}`,
    allocationId: `router-${id}-${process.pid}`,
    workload: {
      members: [
        {
          name: 'main',
          artifact,
          command,
          env: {},
          network: network ? 'outbound' : 'none',
          resources: { cpu: 0.5, memoryBytes: 64 * MiB },
        },
      ],
    },
    timeoutSeconds: 30,
  })

  it('runs an image in Docker and a runtime in the process engine, at the same time', async () => {
    const handles: Record<string, string> = {}
    const on = (k: string) => (e: ExecutionEvent) => {
      if (e.type === 'created') handles[k] = e.handle
    }
    const image = spec('img', { kind: 'image', ref: 'dms-test:1' }, [
      'sh',
      '-c',
      'echo -n in docker > /outputs/w',
    ])
    const runtime = spec('rt', { kind: 'runtime', path: '/bin/sh' }, [
      '/bin/sh',
      '-c',
      'echo -n in a process > /outputs/w',
    ])
    const [a, b] = await Promise.all([
      router.run(image, { onEvent: on('image') }),
      router.run(runtime, { onEvent: on('runtime') }),
    ])
    assert.equal(a.status, 'completed', a.reason)
    assert.equal(b.status, 'completed', b.reason)
    // Docker's handle is its container id; the process engine's, the allocation's cgroup.
    assert.match(handles.image, /^[0-9a-f]{64}$/)
    assert.equal(handles.runtime, `dms-test/dms-${runtime.allocationId}`)
    for (const r of [a, b]) if (r.archive !== undefined) await rm(r.archive.file, { force: true })
    assert.deepEqual(await router.listRuns(), [], 'both cleaned up after themselves')
  })

  it('asks every engine whether an artifact is here', async () => {
    assert.equal(await router.hasArtifact({ kind: 'image', ref: 'dms-test:1' }), true)
    assert.equal(await router.hasArtifact({ kind: 'runtime', ref: '/bin/sh' }), true)
    assert.equal(await router.hasArtifact({ kind: 'runtime', ref: '/usr/bin/perl' }), false, 'not offered')
  })

  it('refuses a runtime with a network (no engine here runs one) before anything runs', async () => {
    const s = spec('net', { kind: 'runtime', path: '/bin/sh' }, ['/bin/sh', '-c', 'exit 0'], true)
    await assert.rejects(router.run(s), (err: Error & { code?: string; peerMessage?: string }) => {
      assert.equal(err.name, 'NoEngineError')
      assert.equal(err.code, 'NO_ENGINE')
      assert.equal(err.peerMessage, 'no engine for this job on this provider')
      return true
    })
  })
})
