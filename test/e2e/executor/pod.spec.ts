import assert from 'node:assert/strict'
import { execFileSync, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Docker from 'dockerode'
import { DockerExecutor } from '../../../dms/executor/docker/docker-executor.js'
import type { ExecutionEvent, ExecutionSpec, WorkloadMember } from '../../../dms/executor/executor.js'
import { member as podMember, type ContainerInit } from '../../helpers/workload.js'
import { silentLogger } from '../../../dms/log.js'

const IMAGE = process.env.DMS_TEST_IMAGE ?? 'dms-test:1'
const MiB = 1024 * 1024

describe('DockerExecutor pods (real Docker)', function () {
  this.timeout(30_000)
  const docker = new Docker()
  let workDir: string

  before(function () {
    execFileSync('bash', [join(import.meta.dirname, '../../../scripts/build-test-image.sh')], {
      stdio: 'inherit',
    })
    workDir = mkdtempSync(join(tmpdir(), 'dms-pod-e2e-'))
  })

  after(function () {
    rmSync(workDir, { recursive: true, force: true })
  })

  const executor = (): DockerExecutor => new DockerExecutor({ log: silentLogger }, { workDir })
  const member = (name: string, script: string, more: Partial<ContainerInit> = {}): WorkloadMember =>
    podMember(name, { image: IMAGE, command: ['sh', '-c', script], cpu: 0.5, memoryBytes: 32 * MiB, ...more })

  function pod(members: WorkloadMember[], overrides: Partial<ExecutionSpec> = {}): ExecutionSpec {
    const allocationId = `pod-${randomBytes(6).toString('hex')}`
    return {
      jobId: `job-${allocationId}`,
      allocationId,
      workload: { members },
      timeoutSeconds: 20,
      diskBytes: process.getuid?.() === 0 ? 16 * MiB : 0,
      ...overrides,
    }
  }

  async function assertCleanedUp(allocationId: string): Promise<void> {
    const left = await docker.listContainers({
      all: true,
      filters: { label: [`dms.allocation=${allocationId}`] },
    })
    assert.deepEqual(left, [], 'every member container must be removed')
    assert.equal(existsSync(join(workDir, allocationId)), false, 'the work folder must be removed')
  }

  it('runs the members together: one reads what the other wrote in /pod; outputs under <member>/', async function () {
    const s = pod([
      member(
        'writer',
        'echo hello-from-writer > /pod/msg.tmp && mv /pod/msg.tmp /pod/msg && echo w > /outputs/w.txt',
      ),
      member(
        'reader',
        'until [ -f /pod/msg ]; do sleep 0.05; done; cat /pod/msg; cp /pod/msg /outputs/got; echo oops >&2',
      ),
    ])
    const events: ExecutionEvent[] = []
    const result = await executor().run(s, { onEvent: (e) => events.push(e) })
    assert.equal(result.status, 'completed', result.reason)
    assert.deepEqual(
      result.members?.map((m) => [m.name, m.status, m.exitCode]),
      [
        ['writer', 'completed', 0],
        ['reader', 'completed', 0],
      ],
    )
    const reader = result.members?.find((m) => m.name === 'reader')
    assert.equal(reader?.stdout, 'hello-from-writer\n')
    assert.equal(reader?.stderr, 'oops\n')
    assert.deepEqual(
      result.outputs.map((o) => o.path),
      ['reader/got', 'writer/w.txt'],
      'each member outputs under its name; the scratch /pod is not an output',
    )
    assert.ok(result.archive !== undefined)
    const logs = events.filter((e) => e.type === 'log')
    assert.ok(
      logs.some((e) => e.member === 'reader' && e.chunk.includes('hello-from-writer')),
      'log events name their member',
    )
    assert.equal(events.filter((e) => e.type === 'started').length, 2)
    rmSync(result.archive.file, { force: true })
    await assertCleanedUp(s.allocationId)
  })

  it('gives each member its own network setting: lo only unless the member asks', async function () {
    const s = pod([
      member('isolated', 'ls /sys/class/net'),
      member('online', 'ls /sys/class/net', { network: true }),
    ])
    const result = await executor().run(s)
    assert.equal(result.status, 'completed', result.reason)
    const isolated = result.members?.find((m) => m.name === 'isolated')
    const online = result.members?.find((m) => m.name === 'online')
    assert.deepEqual(isolated?.stdout.split(/\s+/).filter(Boolean), ['lo'])
    assert.ok(online?.stdout.split(/\s+/).includes('eth0'), `interfaces: ${online?.stdout}`)
    await assertCleanedUp(s.allocationId)
  })

  it('a failing member stops the others and fails the allocation with its exit code', async function () {
    const s = pod([member('waiter', 'echo up; sleep 60'), member('crasher', 'sleep 0.3; exit 3')])
    const result = await executor().run(s)
    assert.equal(result.status, 'failed')
    assert.equal(result.exitCode, 3)
    assert.equal(result.reason, 'member crasher: exit code 3')
    const waiter = result.members?.find((m) => m.name === 'waiter')
    assert.equal(waiter?.status, 'cancelled')
    assert.match(waiter?.reason ?? '', /another member of the pod/)
    assert.equal(waiter?.stdout, 'up\n')
    await assertCleanedUp(s.allocationId)
  })

  it('a cancelled pod kills every member', async function () {
    const s = pod([member('a', 'sleep 60'), member('b', 'sleep 60')])
    const controller = new AbortController()
    let started = 0
    const result = await executor().run(s, {
      signal: controller.signal,
      onEvent: (e) => {
        if (e.type === 'started' && ++started === 2) controller.abort()
      },
    })
    assert.equal(result.status, 'cancelled')
    assert.deepEqual(
      result.members?.map((m) => m.status),
      ['cancelled', 'cancelled'],
    )
    await assertCleanedUp(s.allocationId)
  })

  it('refuses a pod it cannot run (GPUs, a repeated name), naming the field', async function () {
    const s = pod([member('a', 'true'), member('b', 'true', { gpus: 1 })])
    await assert.rejects(executor().run(s), {
      name: 'InvalidSpecError',
      field: 'workload.members.1.resources.gpus',
    })
    const bad = pod([member('a', 'true'), member('a', 'true')])
    await assert.rejects(executor().run(bad), { name: 'InvalidSpecError', field: 'workload.members.1.name' })
    await assertCleanedUp(s.allocationId)
  })

  it('re-attaches to a pod left by a killed process and supervises every member to the end', async function () {
    const s = pod(
      [
        member(
          'a',
          'echo a-before; until [ -f /pod/go ]; do sleep 0.1; done; echo a-after; echo 1 > /outputs/r',
        ),
        member('b', 'echo b-before; until [ -f /pod/go ]; do sleep 0.1; done; echo 2 > /outputs/r'),
      ],
      { timeoutSeconds: 30 },
    )
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        join(import.meta.dirname, '../../fixtures/executor-run.ts'),
        JSON.stringify(s),
        workDir,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    )
    await new Promise<void>((resolve, reject) => {
      let out = ''
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString()
        if ((out.match(/started /g) ?? []).length >= 2) resolve()
      })
      child.once('exit', (code) => reject(new Error(`fixture exited (${code}) before the pod started`)))
    })
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGKILL')
    await exited

    const ex = executor()
    const managed = (await ex.listRuns()).filter((m) => m.allocationId === s.allocationId)
    assert.deepEqual(managed.map((m) => m.member).sort(), ['a', 'b'])
    const result = await ex.reattach(s, {
      onEvent: (e) => {
        if (e.type === 'reattached' && e.member === 'b') {
          writeFileSync(join(workDir, s.allocationId, 'outputs', '.pod', 'go'), '')
        }
      },
    })
    assert.equal(result.status, 'completed', result.reason)
    assert.equal(result.members?.find((m) => m.name === 'a')?.stdout, 'a-before\na-after\n')
    assert.deepEqual(
      result.outputs.map((o) => o.path),
      ['a/r', 'b/r'],
    )
    await assertCleanedUp(s.allocationId)
    await assert.rejects(ex.reattach(s), { name: 'AllocationNotFoundError' })
  })
})
