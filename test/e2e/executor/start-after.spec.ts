/**
 * `RunOptions.startAfter` on the real engine: the work folder, the disk quota (as root) and the
 * container are prepared while the gate (the provider's start note) is pending, the container
 * starts only once it resolves, and a rejected gate undoes everything with nothing started.
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Docker from 'dockerode'
import { DockerExecutor } from '../../../dms/executor/docker/docker-executor.js'
import type { ExecutionEvent, ExecutionSpec } from '../../../dms/executor/executor.js'
import { containerSpec, member as podMember } from '../../helpers/workload.js'
import { isMountPoint } from '../../../dms/executor/common/disk-quota.js'
import { silentLogger } from '../../../dms/log.js'

const IMAGE = process.env.DMS_TEST_IMAGE ?? 'dms-test:1'
const MiB = 1024 * 1024
const ROOT = process.getuid?.() === 0

function deferred(): { promise: Promise<void>; resolve: () => void; reject: (err: Error) => void } {
  let resolve!: () => void
  let reject!: (err: Error) => void
  const promise = new Promise<void>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}

describe('DockerExecutor startAfter (real Docker)', function () {
  this.timeout(20_000)
  const docker = new Docker()
  let workDir: string
  let ex: DockerExecutor

  before(function () {
    execFileSync('bash', [join(import.meta.dirname, '../../../scripts/build-test-image.sh')], {
      stdio: 'inherit',
    })
    workDir = mkdtempSync(join(tmpdir(), 'dms-start-after-'))
    ex = new DockerExecutor({ log: silentLogger }, { workDir })
  })

  after(function () {
    rmSync(workDir, { recursive: true, force: true })
  })

  function spec(): ExecutionSpec {
    const allocationId = `e2e-${randomBytes(6).toString('hex')}`
    return containerSpec({
      jobId: `job-${allocationId}`,
      allocationId,
      image: IMAGE,
      command: ['sh', '-c', 'echo ran > /outputs/ran.txt; echo hi'],
      cpu: 1,
      memoryBytes: 64 * MiB,
      timeoutSeconds: 15,
      diskBytes: ROOT ? 16 * MiB : 0,
    })
  }

  /** Starts a run gated on `gate`; resolves `created` with the container's state once it exists. */
  function gatedRun(s: ExecutionSpec, gate: Promise<void>) {
    const events: ExecutionEvent['type'][] = []
    let onCreated!: (id: string) => void
    const created = new Promise<string>((res) => (onCreated = res))
    const run = ex.run(s, {
      startAfter: gate,
      onEvent: (e) => {
        events.push(e.type)
        if (e.type === 'created') onCreated(e.handle)
      },
    })
    return { run, events, created }
  }

  async function assertCleanedUp(allocationId: string): Promise<void> {
    const left = await docker.listContainers({
      all: true,
      filters: { label: [`dms.allocation=${allocationId}`] },
    })
    assert.deepEqual(left, [], 'the container must be removed')
    assert.equal(existsSync(join(workDir, allocationId)), false, 'the work folder must be removed')
  }

  it('creates the container (and mounts the quota) while the gate is pending, starts it once it resolves', async function () {
    const s = spec()
    const gate = deferred()
    const { run, events, created } = gatedRun(s, gate.promise)
    const id = await created
    const state = (await docker.getContainer(id).inspect()).State
    assert.equal(state.Status, 'created', 'not started while the gate is pending')
    if (ROOT)
      assert.equal(await isMountPoint(join(workDir, s.allocationId, 'outputs')), true, 'quota mounted')
    assert.equal(events.includes('started'), false)
    gate.resolve()
    const result = await run
    assert.equal(result.status, 'completed')
    assert.equal(result.stdout, 'hi\n')
    assert.deepEqual(
      result.outputs.map((o) => o.path),
      ['ran.txt'],
    )
    assert.ok(events.indexOf('started') > events.indexOf('created'))
    await assertCleanedUp(s.allocationId)
  })

  it('a rejected gate: run rejects with its error, nothing started, container and quota undone', async function () {
    const s = spec()
    const gate = deferred()
    const { run, events, created } = gatedRun(s, gate.promise)
    await created
    const refused = Object.assign(new Error('start refused'), { code: 'START_DEADLINE_PASSED' })
    gate.reject(refused)
    await assert.rejects(run, (err) => err === refused)
    assert.equal(events.includes('started'), false, 'never started')
    await assertCleanedUp(s.allocationId)
  })

  it('a pod waits for the gate too: members created, none started, and a rejected gate undoes them all', async function () {
    const s = spec()
    const member = (name: string) =>
      podMember(name, {
        image: IMAGE,
        command: ['sh', '-c', 'echo ran > /outputs/ran.txt'],
        cpu: 0.5,
        memoryBytes: 32 * MiB,
      })
    const podSpec: ExecutionSpec = { ...s, workload: { members: [member('a'), member('b')] } }
    const gate = deferred()
    const events: ExecutionEvent[] = []
    let bothCreated!: () => void
    const created = new Promise<void>((res) => (bothCreated = res))
    const run = ex.run(podSpec, {
      startAfter: gate.promise,
      onEvent: (e) => {
        events.push(e)
        if (events.filter((x) => x.type === 'created').length === 2) bothCreated()
      },
    })
    await created
    for (const e of events)
      if (e.type === 'created')
        assert.equal((await docker.getContainer(e.handle).inspect()).State.Status, 'created')
    const refused = Object.assign(new Error('start refused'), { code: 'START_DEADLINE_PASSED' })
    gate.reject(refused)
    await assert.rejects(run, (err) => err === refused)
    assert.equal(
      events.some((e) => e.type === 'started'),
      false,
      'no member started',
    )
    await assertCleanedUp(s.allocationId)
  })
})
