import assert from 'node:assert/strict'
import type Docker from 'dockerode'
import {
  MAX_PERIOD_US,
  RUNNING_PERIOD_US,
  runningCpuLimit,
  START_BURST_US,
  startCpuLimit,
  stillStarting,
  tightenCpu,
} from '../../../dms/executor/docker/cpu-limit.js'
import { silentLogger } from '../../../dms/log.js'
import { pino } from 'pino'

/**
 * A container whose calls are `update`, recording what it was asked, and `inspect` (a mock: no
 * engine; test/e2e/executor/engine-profile.spec.ts has the real engine's 404).
 */
function mockContainer(fail?: { statusCode: number }, exists = false) {
  const updates: unknown[] = []
  const container = {
    id: 'c1',
    inspect: () =>
      exists ? Promise.resolve({}) : Promise.reject(Object.assign(new Error('gone'), { statusCode: 404 })),
    update: (opts: unknown) => {
      updates.push(opts)
      return fail === undefined ? Promise.resolve({}) : Promise.reject(Object.assign(new Error('x'), fail))
    },
  } as unknown as Docker.Container
  return { container, updates }
}

describe('executor CPU limit (cpu-limit.ts)', function () {
  it('starts with the same share over a period long enough for the start, at most 1 s', function () {
    for (const cpu of [0.01, 0.03, 0.1, 0.25, 0.5, 1, 3.5, 1024]) {
      const start = startCpuLimit(cpu)
      const running = runningCpuLimit(cpu)
      assert.equal(running.CpuPeriod, RUNNING_PERIOD_US)
      assert.ok(Math.abs(start.CpuQuota / start.CpuPeriod - cpu) < 1e-3, `share of ${cpu}`)
      assert.ok(Math.abs(running.CpuQuota / running.CpuPeriod - cpu) < 1e-3, `share of ${cpu}`)
      assert.ok(start.CpuPeriod >= RUNNING_PERIOD_US && start.CpuPeriod <= MAX_PERIOD_US)
      assert.ok(start.CpuQuota >= Math.min(START_BURST_US, cpu * MAX_PERIOD_US), `burst for ${cpu}`)
    }
    assert.deepEqual(startCpuLimit(0.1), { CpuPeriod: 500_000, CpuQuota: 50_000 })
    assert.deepEqual(startCpuLimit(0.01), { CpuPeriod: 1_000_000, CpuQuota: 10_000 })
    assert.deepEqual(startCpuLimit(2), { CpuPeriod: 100_000, CpuQuota: 200_000 })
  })

  it('refuses a share the engine would read as no limit', function () {
    for (const cpu of [0, 0.001, -1, Number.NaN])
      assert.throws(() => startCpuLimit(cpu), { name: 'InvalidSpecError' }, String(cpu))
  })

  it('tightens to the 100 ms period after the start, only when it started with another', async function () {
    const small = mockContainer()
    await tightenCpu(small.container, 0.1, silentLogger)
    assert.deepEqual(small.updates, [{ CpuPeriod: 100_000, CpuQuota: 10_000 }])
    const big = mockContainer()
    await tightenCpu(big.container, 1, silentLogger)
    assert.deepEqual(big.updates, [], 'created with the running period: no engine call')
  })

  it('never throws: a container already gone, or an engine that refuses, keeps the start limit', async function () {
    await tightenCpu(mockContainer({ statusCode: 404 }).container, 0.1, silentLogger)
    await tightenCpu(mockContainer({ statusCode: 500 }).container, 0.1, silentLogger)
  })

  it('logs an engine without the update endpoint (404 for a container it still holds), not one already gone', async function () {
    const warned: string[] = []
    const log = pino({ level: 'warn' }, { write: (line: string) => warned.push(line) })
    await tightenCpu(mockContainer({ statusCode: 404 }).container, 0.1, log)
    assert.deepEqual(warned, [], 'a container already gone is not worth a warning')
    await tightenCpu(mockContainer({ statusCode: 404 }, true).container, 0.1, log)
    assert.equal(warned.length, 1)
    assert.match(warned[0], /the engine has no container update/)
  })

  it('at re-attach, tightens only a running container that still has a start period', function () {
    assert.equal(stillStarting({ CpuPeriod: 500_000, CpuQuota: 50_000 }, true), true)
    assert.equal(stillStarting({ CpuPeriod: 500_000, CpuQuota: 50_000 }, false), false, 'not running')
    assert.equal(stillStarting({ CpuPeriod: 100_000, CpuQuota: 10_000 }, true), false, 'tightened')
    assert.equal(stillStarting({ NanoCpus: 100_000_000, CpuPeriod: 0 }, true), false, 'created by dms before')
  })
})
