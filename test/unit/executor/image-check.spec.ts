/**
 * The image check of a run: without pulls, the create's own answer is the check (no separate
 * look-up on the way to the start); with pulls, the image is looked up and pulled first. Against a
 * stand-in engine (test/helpers/fake-engine.ts, a mock) that records every request.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DockerExecutor } from '../../../dms/executor/docker/docker-executor.js'
import type { ExecutionSpec } from '../../../dms/executor/executor.js'
import { silentLogger } from '../../../dms/log.js'
import { containerSpec } from '../../helpers/workload.js'
import { startFakeEngine, type FakeEngine } from '../../helpers/fake-engine.js'

const spec: ExecutionSpec = containerSpec({
  jobId: 'job-1',
  allocationId: 'alloc-1',
  image: 'missing-image:1',
  command: ['true'],
  cpu: 0.1,
  memoryBytes: 16 * 1024 * 1024,
  timeoutSeconds: 10,
})

describe('DockerExecutor image check (a stand-in engine)', function () {
  let engine: FakeEngine
  let workDir: string

  beforeEach(async () => {
    workDir = mkdtempSync(join(tmpdir(), 'dms-image-check-'))
    // Every image is missing: its look-up, its create and its pull all answer 404.
    engine = await startFakeEngine(() => ({ status: 404, json: { message: 'No such image' } }))
  })
  afterEach(async () => {
    await engine.stop()
    rmSync(workDir, { recursive: true, force: true })
  })

  const executor = (pullImages: boolean) =>
    new DockerExecutor(
      { log: silentLogger },
      { socketPath: engine.socketPath, workDir, diskQuota: false, pullImages },
    )

  it('without pulls: the create says the image is missing, no look-up before it, nothing left', async () => {
    await assert.rejects(executor(false).run(spec), { name: 'ImageNotFoundError', code: 'IMAGE_NOT_FOUND' })
    assert.deepEqual(
      engine.requests.map((r) => r.split('?')[0]),
      ['POST /containers/create'],
    )
    assert.deepEqual(readdirSync(workDir), [], 'the work folder is removed')
  })

  it('with pulls: the image is looked up and its pull tried before anything is created', async () => {
    await assert.rejects(executor(true).run(spec), { name: 'ImageNotFoundError' })
    assert.equal(engine.requests[0], 'GET /images/missing-image:1/json')
    assert.ok(engine.requests.some((r) => r.startsWith('POST /images/create')))
    assert.equal(
      engine.requests.some((r) => r.startsWith('POST /containers/create')),
      false,
    )
  })
})
