/**
 * Issue 13: a job that looks for what the docs say it cannot have. Real Docker, the test image.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Docker from 'dockerode'
import { DockerExecutor } from '../../../dms/executor/docker/docker-executor.js'
import type { ExecutionSpec } from '../../../dms/executor/executor.js'
import { containerSpec, type ContainerSpecInit } from '../../helpers/workload.js'
import { silentLogger } from '../../../dms/log.js'

const IMAGE = process.env.DMS_TEST_IMAGE ?? 'dms-test:1'
const MiB = 1024 * 1024

describe('DockerExecutor: a hostile job (real Docker)', function () {
  this.timeout(30_000)
  const docker = new Docker()
  let workDir: string
  let executor: DockerExecutor

  before(() => {
    workDir = mkdtempSync(join(tmpdir(), 'dms-hostile-job-'))
    executor = new DockerExecutor({ log: silentLogger }, { workDir })
  })
  after(() => rmSync(workDir, { recursive: true, force: true }))

  const spec = (command: string[], over: Partial<ContainerSpecInit> = {}): ExecutionSpec => {
    const allocationId = `hostile-${randomBytes(6).toString('hex')}`
    return containerSpec({
      jobId: `job-${allocationId}`,
      allocationId,
      image: IMAGE,
      command,
      cpu: 0.5,
      memoryBytes: 64 * MiB,
      timeoutSeconds: 20,
      ...over,
    })
  }

  it('finds no /dev/shm, and only /tmp and /outputs writable', async () => {
    const probe = [
      'for d in / /dev /dev/shm /etc /home /run /var /tmp /outputs; do',
      '  if (echo x > "$d/probe") 2>/dev/null; then echo "writable $d"; fi',
      'done',
      'test -e /dev/shm && echo "/dev/shm exists" || true',
    ].join('\n')
    const result = await executor.run(spec(['sh', '-c', probe]))
    assert.equal(result.status, 'completed', result.stderr)
    assert.equal(result.stdout, 'writable /tmp\nwritable /outputs\n')
  })

  it('always runs under a CPU quota: the smallest share gets 0.01 core, a smaller one never reaches the engine', async () => {
    // The job waits for a file the test drops once it has looked at the running container.
    const smallest = spec(['sh', '-c', 'until [ -f /outputs/go ]; do sleep 0.05; done'], { cpu: 0.01 })
    let inspected: Promise<[number, number]> | undefined
    const result = await executor.run(smallest, {
      onEvent: (e) => {
        if (e.type !== 'created') return
        inspected = docker
          .getContainer(e.handle)
          .inspect()
          .then((i) => [i.HostConfig.CpuQuota ?? 0, i.HostConfig.CpuPeriod ?? 0] as [number, number])
          .finally(() => writeFileSync(join(workDir, smallest.allocationId, 'outputs', 'go'), ''))
      },
    })
    assert.equal(result.status, 'completed', result.stderr)
    // 0.01 core: 10 ms per second while it starts (cpu-limit.ts), never "no limit".
    assert.deepEqual(await inspected, [10_000, 1_000_000])

    const tiny = spec(['sh', '-c', ':'], { cpu: 1e-10 })
    await assert.rejects(executor.run(tiny), {
      name: 'InvalidSpecError',
      message: /workload\.members\.0\.resources\.cpu Expected number to be greater or equal to 0\.01/,
    })
    const left = await docker.listContainers({
      all: true,
      filters: { label: [`dms.allocation=${tiny.allocationId}`] },
    })
    assert.deepEqual(left, [], 'nothing was created for it')
  })

  it('refuses an image that is not a reference before asking the engine', async () => {
    for (const image of ['../../containers/json', 'a//b', 'x/./y', 'Upper:1'])
      await assert.rejects(executor.run(spec(['sh', '-c', ':'], { image })), {
        name: 'InvalidSpecError',
        message: /^invalid execution spec: workload\.members\.0\.artifact\.ref /,
      })
    await assert.rejects(executor.hasImage('a//b'), { name: 'InvalidSpecError' })
    await assert.rejects(executor.hasArtifact({ kind: 'image', ref: '../x' }), { name: 'InvalidSpecError' })
  })
})
