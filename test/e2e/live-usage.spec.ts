/**
 * Live usage on a real network with real Docker: a CPU-bound job's heartbeats carry its usage so
 * far, and `dms job status` (the built CLI) shows its cpu seconds growing while it runs; the
 * provider's GET /v1/allocations shows the usage and the cost so far; /metrics sums them.
 */
import assert from 'node:assert/strict'
import { execFile, execFileSync } from 'node:child_process'
import { promisify } from 'node:util'
import { ApiClient } from '../../dms/api/client.js'
import type { JobUpdate } from '../../dms/protocol/messages.js'
import { jobReaches, startNetwork, TEST_IMAGE, type TestNetwork } from '../helpers/network.js'

const MiB = 1024 * 1024
const exec = promisify(execFile)

describe('live usage of a running job (real network, real Docker)', function () {
  this.timeout(120_000)
  let net: TestNetwork

  before(async function () {
    execFileSync('bash', ['scripts/build-test-image.sh'], { stdio: 'inherit' })
    net = await startNetwork([
      { cpu: 1, memoryBytes: 512 * MiB, perCpuHour: 3_600_000, policy: { heartbeatMs: 1000 } },
    ])
  })
  after(async () => net?.stop())

  /** Resolves with the next heartbeat of `id` whose cpu seconds exceed `above`. */
  const usageAbove = (id: string, above: number) =>
    new Promise<JobUpdate>((resolve) => {
      const off = net.requester.orchestrator!.onUpdate((jobId, u) => {
        if (jobId !== id || u.usage === undefined || u.usage.cpuSeconds <= above) return
        off()
        resolve(u)
      })
    })

  const statusCpu = async (id: string): Promise<number> => {
    const { stdout } = await exec(process.execPath, [
      'bin/dms.js',
      'job',
      'status',
      id,
      '--socket',
      net.requester.socketPath!,
    ])
    const m = /usage so far: ([\d.]+)s cpu, (\d+) bytes memory peak/.exec(stdout)
    assert.ok(m, stdout)
    return Number(m[1])
  }

  it("a CPU-bound job's live cpu seconds grow in job status while it runs", async () => {
    const api = new ApiClient(net.requester.socketPath!)
    const { id } = await api.ok<{ id: string }>('POST', '/v1/jobs', {
      image: TEST_IMAGE,
      command: ['sh', '-c', 'echo spinning; while :; do :; done'],
      resources: { cpu: 0.5, memory: '32MiB' },
      maxDuration: 120,
      maxPrice: 1_000_000_000,
    })
    const first = await usageAbove(id, 0)
    const cpu1 = await statusCpu(id)
    assert.ok(cpu1 > 0)
    await usageAbove(id, first.usage!.cpuSeconds)
    const cpu2 = await statusCpu(id)
    assert.ok(cpu2 > cpu1, `cpu seconds grew: ${cpu1} then ${cpu2}`)

    const job = await api.ok<{ liveUsage: { memoryBytes: number; logBytes: number } }>(
      'GET',
      `/v1/jobs/${id}`,
    )
    assert.ok(job.liveUsage.memoryBytes > 0)
    assert.equal(job.liveUsage.logBytes, 'spinning\n'.length)
    const { allocations } = await new ApiClient(net.providers[0].socketPath!).ok<{
      allocations: Array<{ jobId: string; usage?: { cpuSeconds: number }; costSoFar?: number }>
    }>('GET', '/v1/allocations')
    const a = allocations.find((x) => x.jobId === id)
    assert.ok((a?.usage?.cpuSeconds ?? 0) > 0, JSON.stringify(a))
    assert.ok((a?.costSoFar ?? 0) > 0)
    const metrics = (await api.call<string>('GET', '/metrics')).body
    const m = /^dms_jobs_running_cpu_seconds ([\d.]+)$/m.exec(String(metrics))
    assert.ok(m !== null && Number(m[1]) > 0)

    // Once released, the allocation still shows what the run used (as its receipt stated it),
    // and no cost so far: it is not running any more.
    const provider = net.providers[0].provider!
    const released = new Promise<void>((resolve) => {
      const on = (_id: string, state: string | undefined) => {
        if (state !== 'released') return
        provider.events.off('allocation', on)
        resolve()
      }
      provider.events.on('allocation', on)
    })
    await api.ok('DELETE', `/v1/jobs/${id}`)
    assert.equal((await jobReaches(net.requester, id)).state, 'cancelled')
    await released
    const after = (
      await new ApiClient(net.providers[0].socketPath!).ok<{
        allocations: Array<{
          jobId: string
          state: string
          usage?: { cpuSeconds: number; memoryBytes: number; wallSeconds: number }
          costSoFar?: number
        }>
      }>('GET', '/v1/allocations')
    ).allocations.find((x) => x.jobId === id)
    assert.equal(after?.state, 'released')
    assert.ok((after?.usage?.cpuSeconds ?? 0) >= a!.usage!.cpuSeconds, JSON.stringify(after))
    assert.ok((after?.usage?.memoryBytes ?? 0) > 0)
    assert.ok((after?.usage?.wallSeconds ?? 0) > 0)
    assert.equal(after?.costSoFar, undefined)
  })
})
