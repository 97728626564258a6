/**
 * The CPU limit at the start (specs/executor.md, "The CPU limit at the start"), on the real
 * engine: a container is created with the job's CPU share over a longer period, so the runtime's
 * set-up is not throttled, and set to the 100 ms period right after the start. The share, the
 * memory, pids, network and disk limits are in force from the workload's first instruction (it
 * reads them from its own cgroup), and the share is the container's when the run reports it
 * started.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Docker from 'dockerode'
import { DockerExecutor } from '../../../dms/executor/docker/docker-executor.js'
import type { ExecutionEvent, ExecutionSpec } from '../../../dms/executor/executor.js'
import { containerSpec, member as podMember, type ContainerSpecInit } from '../../helpers/workload.js'
import { silentLogger } from '../../../dms/log.js'

const IMAGE = process.env.DMS_TEST_IMAGE ?? 'dms-test:1'
const MiB = 1024 * 1024
const ROOT = process.getuid?.() === 0

/** Prints `<label> <quota>/<period> <memory> <pids>` from the container's own cgroup (v1 or v2). */
const LIMITS = [
  'limits() {',
  '  if [ -f /sys/fs/cgroup/cpu.max ]; then',
  '    set -- $(cat /sys/fs/cgroup/cpu.max)',
  '    echo "$1/$2 $(cat /sys/fs/cgroup/memory.max) $(cat /sys/fs/cgroup/pids.max)"',
  '  else',
  '    c=/sys/fs/cgroup',
  '    echo "$(cat $c/cpu/cpu.cfs_quota_us)/$(cat $c/cpu/cpu.cfs_period_us) $(cat $c/memory/memory.limit_in_bytes) $(cat $c/pids/pids.max)"',
  '  fi',
  '}',
].join('\n')

describe('DockerExecutor: the CPU limit at the start (real Docker)', function () {
  this.timeout(30_000)
  const docker = new Docker()
  let workDir: string
  let ex: DockerExecutor

  // The executor sets the running period right after the start, while the workload's first
  // instruction may still be on its way (on a loaded machine it often is): the test holds each
  // update until the workload has printed its first reading, so that reading is the start limit
  // and never a read torn by the update (quota from before it, period from after).
  const proto = Object.getPrototypeOf(docker.getContainer('x')) as {
    update: (...a: unknown[]) => Promise<unknown>
  }
  const update = proto.update
  let firstReadings: Promise<void> = Promise.resolve()

  before(() => {
    workDir = mkdtempSync(join(tmpdir(), 'dms-cpu-limit-'))
    ex = new DockerExecutor({ log: silentLogger }, { workDir })
    proto.update = async function (this: unknown, ...args: unknown[]) {
      await firstReadings
      return update.apply(this, args)
    }
  })
  after(() => {
    proto.update = update
    rmSync(workDir, { recursive: true, force: true })
  })

  /** Resolves once each of `count` members has printed its first line. */
  function holdUpdatesUntilFirstLines(count: number): (e: ExecutionEvent) => void {
    const seen = new Set<string>()
    let release!: () => void
    firstReadings = new Promise<void>((res) => (release = res))
    return (e) => {
      if (e.type !== 'log' || e.stream !== 'stdout') return
      seen.add(e.member ?? '')
      if (seen.size === count) release()
    }
  }

  const spec = (command: string[], over: Partial<ContainerSpecInit> = {}): ExecutionSpec => {
    const allocationId = `cpu-${randomBytes(6).toString('hex')}`
    return containerSpec({
      jobId: `job-${allocationId}`,
      allocationId,
      image: IMAGE,
      command,
      cpu: 0.1,
      memoryBytes: 16 * MiB,
      pidsLimit: 64,
      diskBytes: ROOT ? 8 * MiB : 0,
      timeoutSeconds: 20,
      ...over,
    })
  }

  it('the workload starts under every limit, with the CPU share over a long period, then over 100 ms', async function () {
    // First instruction: the limits as the kernel applies them. Then it waits (until its timeout
    // at worst) for the executor to set the running period, and prints the CPU limit again.
    const script = [
      LIMITS,
      'echo "first $(limits) net $(ls /sys/class/net | tr "\\n" " ")disk $(df -k /outputs | tail -1 | awk \'{print $2}\')"',
      'until limits | grep -q "^10000/100000 "; do sleep 0.02; done',
      'echo "then $(limits)"',
    ].join('\n')
    const s = spec(['sh', '-c', script])
    let onStarted!: () => void
    const started = new Promise<void>((res) => (onStarted = res))
    let atStart: Promise<Docker.HostConfig> | undefined
    const firstLine = holdUpdatesUntilFirstLines(1)
    const result = await ex.run(s, {
      onEvent: (e) => {
        firstLine(e)
        if (e.type === 'created') {
          const c = docker.getContainer(e.handle)
          // The share is the container's when the run says it started (`running`).
          atStart = started.then(async () => (await c.inspect()).HostConfig)
        }
        if (e.type === 'started') onStarted()
      },
    })
    assert.equal(result.status, 'completed', result.stderr)
    const [first, then] = result.stdout.trim().split('\n')
    const m = /^first (\d+)\/(\d+) (\d+) (\d+) net (.*)disk (\d+)$/.exec(first)
    assert.ok(m, first)
    const [quota, period, memory, pids] = m.slice(1, 5).map(Number)
    assert.equal(period, 500_000, 'a long period at the start')
    assert.equal(quota / period, 0.1, 'the job’s own share from the first instant')
    assert.equal(memory, 16 * MiB)
    assert.equal(pids, 64)
    assert.equal(m[5], 'lo ', 'no network: only the loopback')
    const diskKiB = Number(m[6])
    // 8 MiB and the file system's own 2 MiB (disk-quota.ts), not the host's disk.
    if (ROOT) assert.ok(diskKiB <= 10 * 1024, `/outputs is the 8 MiB quota (${diskKiB} KiB)`)
    assert.equal(then, `then 10000/100000 ${16 * MiB} 64`, 'the running period, the same share')
    const host = await atStart!
    assert.equal(host.CpuQuota! / host.CpuPeriod!, 0.1, 'in force when reported started')
    assert.equal(host.NanoCpus ?? 0, 0)
  })

  it('a pod: each member starts with its share over a long period, then gets the 100 ms period', async function () {
    const script = `${LIMITS}\necho "$(limits)"\nuntil limits | grep -q "^10000/100000 "; do sleep 0.02; done\necho "then $(limits)"`
    const member = (name: string) =>
      podMember(name, { image: IMAGE, command: ['sh', '-c', script], cpu: 0.1, memoryBytes: 16 * MiB })
    const s: ExecutionSpec = { ...spec(['true']), workload: { members: [member('a'), member('b')] } }
    const result = await ex.run(s, { onEvent: holdUpdatesUntilFirstLines(2) })
    assert.equal(result.status, 'completed', JSON.stringify(result.members))
    for (const m of result.members ?? [])
      assert.equal(m.stdout, `50000/500000 ${16 * MiB} 64\nthen 10000/100000 ${16 * MiB} 64\n`, m.name)
    assert.equal(result.members?.length, 2)
  })

  it('a share of 0.5 core or more is created with the 100 ms period and left alone', async function () {
    const s = spec(['sh', '-c', `${LIMITS}\nlimits`], { cpu: 0.5 })
    const result = await ex.run(s)
    assert.equal(result.status, 'completed', result.stderr)
    assert.equal(result.stdout, `50000/100000 ${16 * MiB} 64\n`)
  })
})
