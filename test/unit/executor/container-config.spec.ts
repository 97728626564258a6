import assert from 'node:assert/strict'
import {
  createOptions,
  tmpSizeBytes,
  validateSpec,
  type ContainerSettings,
} from '../../../dms/executor/docker/container-config.js'
import type { ExecutionSpec } from '../../../dms/executor/executor.js'
import { ulimitsProblem, type Ulimit } from '../../../dms/executor/docker/engine-profile.js'
import { containerSpec, type ContainerSpecInit } from '../../helpers/workload.js'

const MiB = 1024 * 1024
const init: ContainerSpecInit = {
  jobId: 'j1',
  allocationId: 'a1',
  image: 'dms-test:1',
  command: ['sh', '-c', ':'],
  cpu: 0.5,
  memoryBytes: 32 * MiB,
  timeoutSeconds: 10,
}
/** The spec of one container, `over` changed. */
const spec = (over: Partial<ContainerSpecInit> = {}): ExecutionSpec => containerSpec({ ...init, ...over })
const base = spec()
/** The create request of a spec's one container. */
const create = (s: ExecutionSpec, set: ContainerSettings = settings) =>
  createOptions(s, s.workload.members[0], set)
const settings = {
  user: '65534:65534',
  labelPrefix: 'dms',
  owner: 'peer-a',
  outputsDir: '/w/a1/outputs',
  maxLogBytes: MiB,
}

describe('container-config', function () {
  it('labels the container with its job, allocation and owner, so a restart finds only its own', function () {
    assert.deepEqual(create(base).Labels, {
      'dms.job': 'j1',
      'dms.allocation': 'a1',
      'dms.managed': 'true',
      'dms.owner': 'peer-a',
    })
  })

  it('asks for no GPU unless the spec does, then for exactly the pinned GPUs by id, never a count', function () {
    assert.equal(create(base).HostConfig?.DeviceRequests, undefined)
    assert.equal(create(spec({ gpus: 0 })).HostConfig?.DeviceRequests, undefined)
    const requests = create(spec({ gpus: 2, gpuIndices: [3, 1] })).HostConfig?.DeviceRequests
    // Count 0 with DeviceIDs: what `docker run --gpus '"device=3,1"'` sends; a count would let
    // the engine pick any GPU, another job's included.
    assert.deepEqual(requests, [
      { Driver: '', Count: 0, DeviceIDs: ['3', '1'], Capabilities: [['gpu']], Options: {} },
    ])
  })

  it('refuses GPUs asked but not pinned, pinned but not asked, repeated or out of range', function () {
    assert.throws(
      () => validateSpec(spec({ gpus: 2 })),
      /gpuIndices must name the 2 GPUs the workload asks \(got 0\)/,
    )
    assert.throws(() => validateSpec(spec({ gpus: 2, gpuIndices: [0] })), /got 1/)
    assert.throws(
      () => validateSpec(spec({ gpuIndices: [0] })),
      /gpuIndices name GPUs for a workload that asks none/,
    )
    assert.throws(() => validateSpec(spec({ gpus: 2, gpuIndices: [1, 1] })), /repeats a GPU/)
    assert.throws(() => validateSpec(spec({ gpus: 1, gpuIndices: [256] })), /not a GPU index/)
    assert.throws(() => validateSpec(spec({ gpus: 1, gpuIndices: [-1] })), /not a GPU index/)
    assert.throws(() => create(spec({ gpus: 1 })), /gpuIndices/)
  })

  it('sizes the tmpfs /tmp within the memory limit, since its pages are charged to it', function () {
    assert.equal(tmpSizeBytes(base.workload.members[0]), 32 * MiB)
    assert.equal(tmpSizeBytes(spec({ memoryBytes: 512 * MiB }).workload.members[0]), 64 * MiB)
    const tmpfs = create(base).HostConfig?.Tmpfs?.['/tmp'] ?? ''
    assert.match(tmpfs, new RegExp(`size=${32 * MiB}`))
    assert.match(tmpfs, /noexec/)
  })

  it('keeps a capped engine log (one file) so a restarted provider can replay it', function () {
    const log = create(base).HostConfig?.LogConfig
    assert.equal(log?.Type, 'local')
    assert.deepEqual(log?.Config, { 'max-size': String(2 * MiB), 'max-file': '1', compress: 'false' })
  })

  it("uses the engine's log driver and ulimits when given (podman refuses `local`), none by default", function () {
    assert.equal(create(base).HostConfig?.Ulimits, undefined, "Docker's: the engine's default ulimits")
    const podman = create(base, {
      ...settings,
      logDriver: 'k8s-file',
      ulimits: [{ name: 'nofile', soft: 1024, hard: 4096 }],
    }).HostConfig
    assert.deepEqual(podman?.LogConfig, { Type: 'k8s-file', Config: { 'max-size': String(2 * MiB) } })
    assert.deepEqual(podman?.Ulimits, [{ Name: 'nofile', Soft: 1024, Hard: 4096 }])
    assert.deepEqual(create(base, { ...settings, logDriver: 'none' }).HostConfig?.LogConfig, {
      Type: 'none',
      Config: {},
    })
  })

  it('refuses ulimits an engine would choke on or a typo would weaken', function () {
    assert.equal(
      ulimitsProblem([
        { name: 'nofile', soft: 64, hard: 64 },
        { name: 'core', soft: 0, hard: -1 },
      ]),
      undefined,
    )
    const bad = (u: unknown[]) => ulimitsProblem(u as Ulimit[])
    assert.match(bad([{ name: 'nofiles', soft: 1, hard: 1 }]) ?? '', /unknown ulimit "nofiles"/)
    assert.match(
      bad([
        { name: 'nofile', soft: 1, hard: 1 },
        { name: 'nofile', soft: 2, hard: 2 },
      ]) ?? '',
      /twice/,
    )
    assert.match(bad([{ name: 'nofile', soft: 8, hard: 4 }]) ?? '', /soft above hard/)
    assert.match(bad([{ name: 'nofile', soft: -1, hard: 4 }]) ?? '', /soft above hard/)
    assert.match(bad([{ name: 'nofile', soft: 1.5, hard: 4 }]) ?? '', /not -1 or a non-negative integer/)
    assert.match(bad([{ name: 'nofile', soft: -2, hard: 4 }]) ?? '', /not -1/)
    assert.match(
      bad(Array.from({ length: 16 }, () => ({ name: 'core', soft: 0, hard: 0 }))) ?? '',
      /at most 15/,
    )
  })

  it('rejects bad disk and GPU amounts', function () {
    assert.throws(() => validateSpec(spec({ diskBytes: -1 })), /diskBytes must be a non-negative integer/)
    assert.throws(() => validateSpec(spec({ diskBytes: 1.5 })), /diskBytes/)
    assert.throws(() => validateSpec(spec({ gpus: 0.5 })), /workload\.members\.0\.resources\.gpus/)
    validateSpec(spec({ diskBytes: 64 * MiB, gpus: 1, gpuIndices: [0] }))
  })

  it('mounts no /dev/shm (a private IPC namespace) and never gives the engine a CPU quota of 0', function () {
    const host = create(base).HostConfig
    assert.equal(host?.IpcMode, 'none')
    assert.equal(host?.NanoCpus, undefined, 'a quota per period instead (cpu-limit.ts)')
    assert.deepEqual([host?.CpuQuota, host?.CpuPeriod], [50_000, 100_000])
    const smallest = create(spec({ cpu: 0.01 })).HostConfig
    assert.deepEqual([smallest?.CpuQuota, smallest?.CpuPeriod], [10_000, 1_000_000])
    for (const cpu of [1e-10, 0.009, 0, -1, Number.NaN])
      assert.throws(() => create(spec({ cpu })), { name: 'InvalidSpecError' }, String(cpu))
    assert.throws(() => validateSpec(spec({ cpu: 1e-10 })), /workload\.members\.0\.resources\.cpu/)
  })

  it('refuses what the API refuses, by the same rules: image references, env names, NUL', function () {
    assert.throws(
      () => validateSpec(spec({ image: '../../containers/json' })),
      /workload\.members\.0\.artifact\.ref registry "\.\." is not a host name/,
    )
    assert.throws(() => validateSpec(spec({ image: 'a//b' })), /empty path component/)
    assert.throws(
      () => validateSpec(spec({ env: { 'A=B': 'x' } })),
      /workload\.members\.0\.env\."A=B" the name must be/,
    )
    assert.throws(
      () => validateSpec(spec({ env: { A: 'x\0' } })),
      /workload\.members\.0\.env\."A" must not contain a NUL/,
    )
    assert.throws(
      () => validateSpec(spec({ command: ['sh', 'a\0b'] })),
      /workload\.members\.0\.command\.1 must not contain a NUL/,
    )
    assert.doesNotThrow(() =>
      validateSpec(spec({ image: `registry.example:5000/a/b:1@sha256:${'f'.repeat(64)}` })),
    )
  })

  it('runs container images only: a bundle (for a process engine) is refused, naming the member', function () {
    const bundle: ExecutionSpec = {
      ...base,
      workload: {
        members: [{ ...base.workload.members[0], artifact: { kind: 'bundle', sha256: 'a'.repeat(64) } }],
      },
    }
    assert.throws(() => validateSpec(bundle), {
      name: 'InvalidSpecError',
      field: 'workload.members.0.artifact',
      message: /bundle: the Docker engine runs container images only/,
    })
  })

  it('gives each container its own member: image, command, env, network and share', function () {
    const s: ExecutionSpec = {
      ...base,
      workload: {
        members: [
          base.workload.members[0],
          {
            name: 'b',
            artifact: { kind: 'image', ref: 'other:2' },
            command: ['b'],
            env: { B: '1' },
            network: 'outbound',
            resources: { cpu: 0.25, memoryBytes: 16 * MiB },
          },
        ],
      },
    }
    const o = createOptions(s, s.workload.members[1], { ...settings, member: 'b' })
    assert.deepEqual(
      [o.Image, o.Cmd, o.Env, o.HostConfig?.NetworkMode],
      ['other:2', ['b'], ['B=1'], 'bridge'],
    )
    assert.deepEqual(
      [o.HostConfig?.Memory, o.HostConfig!.CpuQuota! / o.HostConfig!.CpuPeriod!],
      [16 * MiB, 0.25],
    )
    assert.equal(create(s).HostConfig?.NetworkMode, 'none')
  })
})
