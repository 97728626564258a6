/**
 * Docker-API engines (specs/executor.md, "Docker-API engines"): the self-check a provider runs
 * before it bids, the log driver and ulimits chosen per engine, and an engine without the update
 * endpoint. Real Docker, directly and behind test/helpers/podman-like-engine.ts.
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Docker from 'dockerode'
import { pino } from 'pino'
import { startCpuLimit, tightenCpu } from '../../../dms/executor/docker/cpu-limit.js'
import { DockerExecutor, type DockerExecutorInit } from '../../../dms/executor/docker/docker-executor.js'
import { silentLogger } from '../../../dms/log.js'
import { podmanLikeEngine, type PodmanLikeEngine } from '../../helpers/podman-like-engine.js'
import { containerSpec } from '../../helpers/workload.js'

const IMAGE = process.env.DMS_TEST_IMAGE ?? 'dms-test:1'
const MiB = 1024 * 1024

describe('DockerExecutor on Docker-API engines (real Docker)', function () {
  this.timeout(30_000)
  const docker = new Docker()
  let workDir: string
  let podman: PodmanLikeEngine | undefined

  before(function () {
    execFileSync('bash', [join(import.meta.dirname, '../../../scripts/build-test-image.sh')], {
      stdio: 'inherit',
    })
    workDir = mkdtempSync(join(tmpdir(), 'dms-engine-profile-'))
  })
  afterEach(async () => {
    await podman?.close()
    podman = undefined
  })
  after(() => rmSync(workDir, { recursive: true, force: true }))

  const executor = (init: Partial<DockerExecutorInit> = {}, log = silentLogger) =>
    new DockerExecutor({ log }, { workDir, diskQuota: false, ...init })
  const spec = (command: string[], cpu = 1) => {
    const allocationId = `ep-${randomBytes(6).toString('hex')}`
    return containerSpec({
      jobId: `job-${allocationId}`,
      allocationId,
      image: IMAGE,
      command,
      cpu,
      memoryBytes: 64 * MiB,
      timeoutSeconds: 15,
    })
  }
  const selfCheckContainers = async () =>
    (await docker.listContainers({ all: true })).filter((c) => c.Names.some((n) => n.includes('self-check')))

  it('passes the self-check on Docker with the defaults, and leaves no container behind', async function () {
    const can = await executor().capabilities()
    assert.equal(can.available, true, can.why)
    assert.deepEqual(await selfCheckContainers(), [])
  })

  it('an engine that refuses the log driver fails the self-check and is unavailable, with its reason', async function () {
    podman = await podmanLikeEngine()
    const can = await executor({ socketPath: podman.socketPath }).capabilities()
    assert.equal(can.available, false)
    assert.match(can.why ?? '', /refused to create a hardened container: invalid log driver: local/)
  })

  it('with the log driver chosen for that engine, it passes; a job runs with that driver', async function () {
    podman = await podmanLikeEngine()
    const can = await executor({ socketPath: podman.socketPath, logDriver: 'json-file' }).capabilities()
    assert.equal(can.available, true, can.why)
    // The run itself on Docker: the proxy does not carry an attach's stream (remains: podman).
    const result = await executor({ logDriver: 'json-file' }).run(spec(['sh', '-c', 'echo hi']))
    assert.equal(result.status, 'completed', result.reason)
    assert.equal(result.stdout, 'hi\n')
  })

  it('ulimits the host cannot give fail the self-check; ulimits it can are set in the container', async function () {
    const nrOpen = Number(readFileSync('/proc/sys/fs/nr_open', 'utf8'))
    const tooMany = executor({ ulimits: [{ name: 'nofile', soft: nrOpen + 1, hard: nrOpen + 1 }] })
    const can = await tooMany.capabilities()
    assert.equal(can.available, false)
    assert.match(can.why ?? '', /could not start a hardened container/)
    assert.deepEqual(await selfCheckContainers(), [])
    const result = await executor({ ulimits: [{ name: 'nofile', soft: 64, hard: 64 }] }).run(
      spec(['sh', '-c', 'ulimit -n']),
    )
    assert.equal(result.stdout, '64\n')
  })

  it('logs an engine without the update endpoint (podman) instead of swallowing its 404', async function () {
    podman = await podmanLikeEngine()
    const lines: string[] = []
    const log = pino({ level: 'warn' }, { write: (l: string) => lines.push(l) })
    const created = await docker.createContainer({
      Image: IMAGE,
      Cmd: ['sleep', '30'],
      Labels: { 'dms.managed': 'true' },
      HostConfig: startCpuLimit(0.1),
    })
    try {
      await created.start()
      // 0.1 core starts over a 500 ms period, then asks for the 100 ms one (cpu-limit.ts).
      await tightenCpu(new Docker({ socketPath: podman.socketPath }).getContainer(created.id), 0.1, log)
      assert.equal(podman.refusedUpdates.length, 1)
      assert.ok(
        lines.some((l) => l.includes('the engine has no container update')),
        `no warning in:\n${lines.join('')}`,
      )
    } finally {
      await created.remove({ force: true })
    }
  })
})
