/**
 * Issue 31: what a job run by the process engine cannot have (real namespaces and cgroups, as
 * root): the host's files, root, capabilities, new privileges, the host's processes, a writable
 * root, devices beyond the minimal few, more processes than its limit; and what it is refused
 * before anything runs.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { promises as fs } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ExecutionSpec } from '../../../dms/executor/executor.js'
import { ProcessEngine } from '../../../dms/executor/process/process-engine.js'
import { silentLogger } from '../../../dms/log.js'
import { SINGLE_MEMBER, type WorkloadMember } from '../../../dms/workload/workload.js'

const MiB = 1024 * 1024

describe('ProcessEngine: a hostile job (real namespaces and cgroups)', function () {
  this.timeout(30_000)
  let workDir: string
  let engine: ProcessEngine
  let secret: string

  before(() => {
    workDir = mkdtempSync(join(tmpdir(), 'dms-process-sandbox-'))
    secret = join(workDir, 'host-secret')
    writeFileSync(secret, 'the host')
    engine = new ProcessEngine(
      { log: silentLogger },
      { workDir, cgroupParent: 'dms-test-sandbox', runtimes: ['/bin/sh'] },
    )
  })
  after(async () => {
    rmSync(workDir, { recursive: true, force: true })
    for (const c of ['cpu', 'cpuacct', 'memory', 'pids', '']) {
      await fs.rmdir(join('/sys/fs/cgroup', c, 'dms-test-sandbox')).catch(() => {})
    }
  })

  const spec = (script: string, over: Partial<WorkloadMember> = {}, pidsLimit?: number): ExecutionSpec => {
    const allocationId = `sandbox-${randomBytes(6).toString('hex')}`
    return {
      jobId: `job-${allocationId}`,
      allocationId,
      workload: {
        members: [
          {
            name: SINGLE_MEMBER,
            artifact: { kind: 'runtime', path: '/bin/sh' },
            command: ['/bin/sh', '-c', script],
            env: {},
            network: 'none',
            resources: { cpu: 1, memoryBytes: 64 * MiB },
            ...over,
          },
        ],
      },
      timeoutSeconds: 20,
      ...(pidsLimit !== undefined ? { pidsLimit } : {}),
    }
  }

  const run = async (script: string): Promise<string> => {
    const result = await engine.run(spec(script))
    assert.equal(result.status, 'completed', `${result.reason}: ${result.stderr}`)
    return result.stdout
  }

  it('runs as nobody, with no capabilities and no new privileges', async () => {
    const out = await run('id -u; id -g; grep -E "^(CapEff|CapBnd|NoNewPrivs):" /proc/self/status')
    assert.deepEqual(out.trim().split('\n'), [
      '65534',
      '65534',
      'CapEff:\t0000000000000000',
      'CapBnd:\t0000000000000000',
      'NoNewPrivs:\t1',
    ])
  })

  it('sees none of the host: not its files, not its processes', async () => {
    const out = await run(
      `ls -d ${secret} /root /work /home 2>&1 | grep -c "No such"; ls /proc | grep -c "^[0-9]"; ls /`,
    )
    const [missing, pids, ...root] = out.trim().split('\n')
    assert.equal(missing, '4', 'no host folder outside the binds is there')
    // sh, and the ls and grep of the pipeline: only the job's own processes.
    assert.ok(Number(pids) <= 4, `pids seen: ${pids}`)
    assert.deepEqual(root.filter((n) => !['lib32', 'lib64', 'sbin', 'etc'].includes(n)).sort(), [
      'bin',
      'dev',
      'inputs',
      'lib',
      'outputs',
      'proc',
      'tmp',
      'usr',
    ])
  })

  it('writes only /outputs and /tmp; the root and the binds are read-only', async () => {
    const out = await run(
      'for p in / /usr /etc/ssl /dev /inputs /outputs /tmp; do ' +
        'if touch "$p/x" 2>/dev/null; then echo "$p rw"; else echo "$p ro"; fi; done',
    )
    assert.deepEqual(out.trim().split('\n'), [
      '/ ro',
      '/usr ro',
      '/etc/ssl ro',
      '/dev ro',
      '/inputs ro',
      '/outputs rw',
      '/tmp rw',
    ])
  })

  it('has a minimal /dev, and cannot mount or chroot', async () => {
    const out = await run(
      'ls /dev | sort | tr "\\n" " "; echo; ' +
        'mount -t tmpfs x /tmp 2>/dev/null && echo mounted || echo no-mount; ' +
        'chroot / /bin/true 2>/dev/null && echo chrooted || echo no-chroot',
    )
    const [devs, mount, chroot] = out.trim().split('\n')
    assert.equal(devs.trim(), 'fd full null random stderr stdin stdout urandom zero')
    assert.equal(mount, 'no-mount')
    assert.equal(chroot, 'no-chroot')
  })

  it('holds the job to its pids limit', async () => {
    const result = await engine.run(
      spec('i=0; while [ $i -lt 40 ]; do sleep 5 & i=$((i + 1)); done 2>/dev/null; jobs -p | wc -l', {}, 16),
    )
    assert.ok(Number(result.stdout.trim()) < 16, `started ${result.stdout.trim()} of 40`)
  })

  it("keeps two jobs running at once apart: neither sees the other's processes or outputs", async () => {
    const a = spec(
      'echo a > /outputs/mine; sleep 2; ls /outputs; ps -e -o comm= 2>/dev/null | sort -u | tr "\\n" " "',
    )
    const b = spec(
      'sleep 1; echo "outputs:$(ls /outputs)"; ls /proc | grep -c "^[0-9]"; ls / | grep -c sandbox || true',
    )
    const [ra, rb] = await Promise.all([engine.run(a), engine.run(b)])
    assert.equal(ra.status, 'completed', `${ra.reason} ${ra.stderr}`)
    assert.equal(rb.status, 'completed', rb.stderr)
    assert.equal(ra.stdout.split('\n')[0], 'mine')
    const [bOutputs, bPids, bSeen] = rb.stdout.split('\n')
    assert.equal(bOutputs, 'outputs:', "b's /outputs is empty: a's file is not there")
    assert.ok(Number(bPids) <= 4, `b sees ${bPids} pids`)
    assert.equal(bSeen, '0')
  })

  it("bounds /outputs by the job's disk quota while it runs", async () => {
    const s = { ...spec('head -c 67108864 /dev/zero > /outputs/big; echo $?'), diskBytes: 8 * 1024 * 1024 }
    const result = await engine.run(s)
    assert.equal(result.status, 'completed', result.stderr)
    assert.notEqual(result.stdout.trim(), '0', `the write past the quota failed: ${result.stderr}`)
    assert.match(result.stderr, /No space left on device/)
  })

  it('does not take a reused pid for its runner (after a reboot): the run is over, not waited on', async () => {
    const s = spec('true')
    const runDir = join(workDir, s.allocationId, 'run')
    await fs.mkdir(runDir, { recursive: true })
    const record = { v: 1, jobId: s.jobId, allocationId: s.allocationId, startedAt: Date.now() }
    await fs.writeFile(join(runDir, 'run.json'), JSON.stringify(record))
    await fs.writeFile(join(runDir, 'pid'), `${process.pid}\n`) // alive, but no runner
    const listed = (await engine.listRuns()).filter((r) => r.allocationId === s.allocationId)
    assert.deepEqual(
      listed.map((r) => r.running),
      [false],
    )
    const result = await engine.reattach(s)
    assert.equal(result.status, 'failed')
    assert.equal(result.exitCode, 137)
    assert.deepEqual(
      (await engine.listRuns()).filter((r) => r.allocationId === s.allocationId),
      [],
      'cleaned up',
    )
  })

  it('gets only what the job gave in its environment', async () => {
    process.env.DMS_TEST_HOST_SECRET = 'leaked'
    try {
      const out = await run('env | sort')
      assert.deepEqual(out.trim().split('\n'), ['HOME=/tmp', 'PATH=/usr/local/bin:/usr/bin:/bin', 'PWD=/'])
    } finally {
      delete process.env.DMS_TEST_HOST_SECRET
    }
  })

  it('refuses, before anything runs, a runtime not offered, a command not of the runtime, a network, an image', async () => {
    const python = spec('true', {
      artifact: { kind: 'runtime', path: '/usr/bin/perl' },
      command: ['/usr/bin/perl'],
    })
    await assert.rejects(engine.run(python), { name: 'InvalidSpecError', message: /not offered/ })
    const other = spec('true', { command: ['/usr/bin/id'] })
    await assert.rejects(engine.run(other), {
      name: 'InvalidSpecError',
      message: /must be the runtime's path/,
    })
    await assert.rejects(engine.run(spec('true', { network: 'outbound' })), { name: 'InvalidSpecError' })
    const image = spec('true', { artifact: { kind: 'image', ref: 'dms-test:1' } })
    await assert.rejects(engine.run(image), { name: 'InvalidSpecError', message: /runtimes only/ })
    const made = (await fs.readdir(workDir)).filter((n) => n.startsWith('sandbox-'))
    assert.deepEqual(made, [], 'nothing was made for them')
    assert.equal(await engine.hasArtifact({ kind: 'runtime', ref: '/usr/bin/perl' }), false)
    assert.equal(await engine.hasArtifact({ kind: 'runtime', ref: '/bin/sh' }), true)
    assert.equal(await engine.hasArtifact({ kind: 'image', ref: '/bin/sh' }), false)
  })
})
