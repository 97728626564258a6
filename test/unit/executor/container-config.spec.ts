import assert from 'node:assert/strict'
import { createOptions, tmpSizeBytes, validateSpec } from '../../../dms/executor/docker/container-config.js'
import type { ExecutionSpec } from '../../../dms/executor/executor.js'

const MiB = 1024 * 1024
const base: ExecutionSpec = {
  jobId: 'j1',
  allocationId: 'a1',
  image: 'dms-test:1',
  command: ['sh', '-c', ':'],
  cpu: 0.5,
  memoryBytes: 32 * MiB,
  timeoutSeconds: 10,
}
const settings = {
  user: '65534:65534',
  labelPrefix: 'dms',
  owner: 'peer-a',
  outputsDir: '/w/a1/outputs',
  maxLogBytes: MiB,
}

describe('container-config', function () {
  it('labels the container with its job, allocation and owner, so a restart finds only its own', function () {
    assert.deepEqual(createOptions(base, settings).Labels, {
      'dms.job': 'j1',
      'dms.allocation': 'a1',
      'dms.managed': 'true',
      'dms.owner': 'peer-a',
    })
  })

  it('asks for no GPU unless the spec does, then for exactly that many', function () {
    assert.equal(createOptions(base, settings).HostConfig?.DeviceRequests, undefined)
    assert.equal(createOptions({ ...base, gpus: 0 }, settings).HostConfig?.DeviceRequests, undefined)
    const requests = createOptions({ ...base, gpus: 2 }, settings).HostConfig?.DeviceRequests
    assert.deepEqual(requests, [
      { Driver: '', Count: 2, DeviceIDs: [], Capabilities: [['gpu']], Options: {} },
    ])
  })

  it('sizes the tmpfs /tmp within the memory limit, since its pages are charged to it', function () {
    assert.equal(tmpSizeBytes(base), 32 * MiB)
    assert.equal(tmpSizeBytes({ ...base, memoryBytes: 512 * MiB }), 64 * MiB)
    const tmpfs = createOptions(base, settings).HostConfig?.Tmpfs?.['/tmp'] ?? ''
    assert.match(tmpfs, new RegExp(`size=${32 * MiB}`))
    assert.match(tmpfs, /noexec/)
  })

  it('keeps a capped engine log (one file) so a restarted provider can replay it', function () {
    const log = createOptions(base, settings).HostConfig?.LogConfig
    assert.equal(log?.Type, 'local')
    assert.deepEqual(log?.Config, { 'max-size': String(2 * MiB), 'max-file': '1', compress: 'false' })
  })

  it('rejects bad disk and GPU amounts', function () {
    assert.throws(() => validateSpec({ ...base, diskBytes: -1 }), /diskBytes must be a non-negative integer/)
    assert.throws(() => validateSpec({ ...base, diskBytes: 1.5 }), /diskBytes/)
    assert.throws(() => validateSpec({ ...base, gpus: 0.5 }), /gpus must be a non-negative integer/)
    validateSpec({ ...base, diskBytes: 64 * MiB, gpus: 1 })
  })

  it('mounts no /dev/shm (a private IPC namespace) and never gives the engine a CPU quota of 0', function () {
    const host = createOptions(base, settings).HostConfig
    assert.equal(host?.IpcMode, 'none')
    assert.equal(host?.NanoCpus, undefined, 'a quota per period instead (cpu-limit.ts)')
    assert.deepEqual([host?.CpuQuota, host?.CpuPeriod], [50_000, 100_000])
    const smallest = createOptions({ ...base, cpu: 0.01 }, settings).HostConfig
    assert.deepEqual([smallest?.CpuQuota, smallest?.CpuPeriod], [10_000, 1_000_000])
    for (const cpu of [1e-10, 0.009, 0, -1, Number.NaN])
      assert.throws(
        () => createOptions({ ...base, cpu }, settings),
        { name: 'InvalidSpecError' },
        String(cpu),
      )
    assert.throws(() => validateSpec({ ...base, cpu: 1e-10 }), /cpu must be at least 0\.01/)
  })

  it('refuses what the API refuses, by the same rules: image references, env names, NUL', function () {
    assert.throws(
      () => validateSpec({ ...base, image: '../../containers/json' }),
      /image registry "\.\." is not a host name/,
    )
    assert.throws(() => validateSpec({ ...base, image: 'a//b' }), /empty path component/)
    assert.throws(() => validateSpec({ ...base, env: { 'A=B': 'x' } }), /env "A=B": the name must be/)
    assert.throws(() => validateSpec({ ...base, env: { A: 'x\0' } }), /env "A": must not contain a NUL/)
    assert.throws(
      () => validateSpec({ ...base, command: ['sh', 'a\0b'] }),
      /command argument 1 must not contain a NUL/,
    )
    assert.doesNotThrow(() =>
      validateSpec({ ...base, image: `registry.example:5000/a/b:1@sha256:${'f'.repeat(64)}` }),
    )
  })
})
