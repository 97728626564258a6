import assert from 'node:assert/strict'
import { execFileSync, spawn } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Docker from 'dockerode'
import { stageInputs } from '../../../dms/blobs/staging.js'
import { BlobStore } from '../../../dms/blobs/store.js'
import { DockerExecutor, type DockerExecutorInit } from '../../../dms/executor/docker/docker-executor.js'
import type { ExecutionEvent, ExecutionSpec } from '../../../dms/executor/executor.js'
import { hashOutputs } from '../../../dms/workload/outputs.js'
import { silentLogger } from '../../../dms/log.js'
import { untar } from '../../helpers/tar.js'
import { containerSpec, type ContainerSpecInit } from '../../helpers/workload.js'

const IMAGE = process.env.DMS_TEST_IMAGE ?? 'dms-test:1'
const MiB = 1024 * 1024
const sha256 = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex')

describe('DockerExecutor (real Docker)', function () {
  this.timeout(20_000)
  const docker = new Docker()
  let workDir: string

  before(function () {
    execFileSync('bash', [join(import.meta.dirname, '../../../scripts/build-test-image.sh')], {
      stdio: 'inherit',
    })
    workDir = mkdtempSync(join(tmpdir(), 'dms-executor-e2e-'))
  })

  after(function () {
    rmSync(workDir, { recursive: true, force: true })
  })

  function executor(init: Partial<DockerExecutorInit> = {}): DockerExecutor {
    return new DockerExecutor({ log: silentLogger }, { workDir, ...init })
  }

  function spec(command: string[], overrides: Partial<ContainerSpecInit> = {}): ExecutionSpec {
    const allocationId = `e2e-${randomBytes(6).toString('hex')}`
    return containerSpec({
      jobId: `job-${allocationId}`,
      allocationId,
      image: IMAGE,
      command,
      cpu: 1,
      memoryBytes: 64 * MiB,
      timeoutSeconds: 15,
      ...overrides,
    })
  }

  async function containersOf(allocationId: string): Promise<Docker.ContainerInfo[]> {
    return docker.listContainers({ all: true, filters: { label: [`dms.allocation=${allocationId}`] } })
  }

  async function assertCleanedUp(allocationId: string): Promise<void> {
    assert.deepEqual(await containersOf(allocationId), [], 'the container must be removed')
    assert.equal(existsSync(join(workDir, allocationId)), false, 'the work folder must be removed')
  }

  it('reports the engine and finds the test image', async function () {
    const ex = executor()
    const info = await ex.capabilities()
    assert.equal(info.name, 'docker')
    assert.equal(info.available, true)
    assert.match(info.version ?? '', /^\d+\.\d+/)
    assert.deepEqual(info.artifactKinds, ['image'])
    assert.equal(await ex.hasArtifact({ kind: 'image', ref: IMAGE }), true)
    assert.equal(await ex.hasArtifact({ kind: 'bundle', ref: IMAGE }), false)
    assert.equal(await ex.hasImage(IMAGE), true)
    assert.equal(await ex.hasImage('dms-no-such-image:0'), false)
  })

  it('says the engine is unreachable when nothing answers on the socket', async function () {
    const ex = executor({ socketPath: join(workDir, 'no-such-docker.sock') })
    const info = await ex.capabilities()
    assert.equal(info.available, false)
    assert.match(info.why ?? '', /no-such-docker\.sock/)
    await assert.rejects(ex.run(spec(['sh', '-c', ':'])), { name: 'ExecutorUnavailableError' })
  })

  it('runs to completion, streams stdout and collects /outputs with their hashes', async function () {
    const s = spec(
      [
        'sh',
        '-c',
        'echo "hello $GREETING"; printf 42 > /outputs/result.txt; mkdir /outputs/sub; echo b > /outputs/sub/b.txt',
      ],
      { env: { GREETING: 'world' } },
    )
    const events: ExecutionEvent[] = []
    const result = await executor().run(s, { onEvent: (e) => events.push(e) })

    assert.equal(result.status, 'completed', result.reason)
    assert.equal(result.exitCode, 0)
    assert.equal(result.reason, undefined)
    assert.equal(result.stdout, 'hello world\n')
    assert.equal(result.stderr, '')
    assert.equal(result.truncated, false)
    // The result lists the files; their bytes are only in the archive file on disk.
    assert.deepEqual(
      result.outputs.map((o) => Object.keys(o).sort()),
      [
        ['path', 'sha256', 'size'],
        ['path', 'sha256', 'size'],
      ],
    )
    assert.ok(result.archive !== undefined && statSync(result.archive.file).isFile())
    assert.equal(result.archive.size, statSync(result.archive.file).size)
    assert.equal(result.archive.sha256, sha256(readFileSync(result.archive.file)))
    const inArchive = await untar(result.archive.file)
    rmSync(result.archive.file)
    assert.deepEqual(
      result.outputs.map(({ path, size, sha256 }, i) => ({
        path,
        size,
        sha256,
        text:
          inArchive[i].path === path ? inArchive[i].content.toString() : `(archive has ${inArchive[i].path})`,
      })),
      [
        {
          path: 'result.txt',
          size: 2,
          sha256: sha256('42'),
          text: '42',
        },
        {
          path: 'sub/b.txt',
          size: 2,
          sha256: sha256('b\n'),
          text: 'b\n',
        },
      ],
    )
    // The documented formula, computed independently of hashOutputs.
    const expected = sha256(`result.txt\0${sha256('42')}\nsub/b.txt\0${sha256('b\n')}\n`)
    assert.equal(result.outputsHash, expected)
    assert.equal(hashOutputs([...result.outputs].reverse()), expected, 'hashOutputs sorts by path itself')

    // Usage samples (live usage) may arrive while it runs, as many as its length allows.
    assert.deepEqual(
      events.filter((e) => e.type !== 'log' && e.type !== 'usage').map((e) => e.type),
      ['created', 'started', 'exited'],
    )
    const logged = events
      .flatMap((e) => (e.type === 'log' && e.stream === 'stdout' ? [e.chunk] : []))
      .join('')
    assert.equal(logged, 'hello world\n')
    assert.ok(
      result.usage.wallSeconds > 0 && result.usage.wallSeconds < 5,
      `wallSeconds ${result.usage.wallSeconds}`,
    )
    await assertCleanedUp(s.allocationId)
  })

  it('reports a non-zero exit as failed, with stderr', async function () {
    const s = spec(['sh', '-c', 'echo oops >&2; exit 3'])
    const result = await executor().run(s)
    assert.equal(result.status, 'failed')
    assert.equal(result.exitCode, 3)
    assert.equal(result.reason, 'exit code 3')
    assert.equal(result.stderr, 'oops\n')
    await assertCleanedUp(s.allocationId)
  })

  it('kills the container at the timeout', async function () {
    const s = spec(['sleep', '30'], { timeoutSeconds: 1 })
    const result = await executor().run(s)
    assert.equal(result.status, 'timed_out')
    assert.equal(result.reason, 'timed out after 1s')
    assert.ok(
      result.usage.wallSeconds >= 0.9 && result.usage.wallSeconds < 5,
      `wallSeconds ${result.usage.wallSeconds}`,
    )
    await assertCleanedUp(s.allocationId)
  })

  it('has no network unless asked (only lo), and a network when spec.network', async function () {
    const ex = executor()
    const isolated = await ex.run(spec(['ls', '/sys/class/net']))
    assert.equal(isolated.status, 'completed', isolated.reason)
    assert.deepEqual(isolated.stdout.split(/\s+/).filter(Boolean), ['lo'])
    const networked = await ex.run(spec(['ls', '/sys/class/net'], { network: true }))
    assert.ok(networked.stdout.split(/\s+/).includes('eth0'), `interfaces: ${networked.stdout}`)
  })

  it('has a read-only root, a writable /tmp, a non-root user and no capabilities', async function () {
    const script = [
      'touch /oops 2>/dev/null && echo root-writable',
      'touch /tmp/ok && echo tmp-writable',
      'echo uid=$(id -u)',
      'grep -E "^(CapEff|NoNewPrivs):" /proc/self/status',
    ].join('; ')
    const result = await executor().run(spec(['sh', '-c', script]))
    assert.equal(result.status, 'completed', result.reason)
    assert.doesNotMatch(result.stdout, /root-writable/)
    assert.match(result.stdout, /tmp-writable/)
    assert.match(result.stdout, /^uid=65534$/m)
    assert.match(result.stdout, /^CapEff:\s+0+$/m)
    assert.match(result.stdout, /^NoNewPrivs:\s+1$/m)
  })

  it('enforces the pids limit', async function () {
    const script = 'i=0; while [ $i -lt 20 ]; do sleep 1 & i=$((i+1)); done; wait'
    const result = await executor().run(spec(['sh', '-c', script], { pidsLimit: 5 }))
    assert.equal(result.status, 'failed')
    assert.match(result.stderr, /can't fork/)
  })

  it('holds a fork bomb at the pids limit until the timeout kills it', async function () {
    const s = spec(['sh', '-c', 'bomb() { bomb | bomb & }; bomb; sleep 30'], {
      pidsLimit: 16,
      timeoutSeconds: 2,
    })
    const result = await executor().run(s)
    assert.equal(result.status, 'timed_out')
    assert.match(result.stderr, /can't fork/)
    await assertCleanedUp(s.allocationId)
  })

  it('reports a memory limit hit as "memory limit exceeded"', async function () {
    // tail keeps the last "line" of /dev/zero, which has no newline: it grows until killed.
    const s = spec(['sh', '-c', 'head -c 200m /dev/zero | tail'], { memoryBytes: 32 * MiB })
    const result = await executor().run(s)
    assert.equal(result.status, 'failed')
    assert.equal(result.reason, 'memory limit exceeded')
    assert.ok(result.usage.peakMemoryBytes <= 32 * MiB, `peak ${result.usage.peakMemoryBytes}`)
    await assertCleanedUp(s.allocationId)
  })

  it('samples cpu time and peak memory of a busy job', async function () {
    // The engine refreshes stats about once a second, so the job must outlive one refresh.
    const s = spec(['sh', '-c', 'timeout 2 sh -c "while :; do :; done"; exit 0'])
    const result = await executor().run(s)
    assert.equal(result.status, 'completed', result.reason)
    assert.ok(
      result.usage.wallSeconds >= 1.9 && result.usage.wallSeconds < 5,
      `wallSeconds ${result.usage.wallSeconds}`,
    )
    assert.ok(result.usage.cpuSeconds > 0.3, `cpuSeconds ${result.usage.cpuSeconds}`)
    assert.ok(result.usage.cpuSeconds <= result.usage.wallSeconds * 1.1, 'cpu <= wall at 1 core')
    assert.ok(result.usage.peakMemoryBytes > 0)
  })

  it('cancels on abort, before and during the run', async function () {
    const ex = executor()
    const early = new AbortController()
    early.abort()
    const before = await ex.run(spec(['sh', '-c', ':']), { signal: early.signal })
    assert.equal(before.status, 'cancelled')

    const controller = new AbortController()
    const s = spec(['sh', '-c', 'echo ready; sleep 30'])
    const result = await ex.run(s, {
      signal: controller.signal,
      onEvent: (e) => {
        if (e.type === 'log' && e.chunk.includes('ready')) controller.abort()
      },
    })
    assert.equal(result.status, 'cancelled')
    assert.equal(result.reason, 'cancelled')
    assert.ok(result.usage.wallSeconds < 10)
    await assertCleanedUp(s.allocationId)
  })

  it('rejects a missing image with ImageNotFoundError and creates nothing', async function () {
    const s = spec(['sh', '-c', ':'], { image: 'dms-no-such-image:0' })
    await assert.rejects(executor().run(s), (err: Error & { code?: string }) => {
      assert.equal(err.name, 'ImageNotFoundError')
      assert.equal(err.code, 'IMAGE_NOT_FOUND')
      assert.match(err.message, /not present locally/)
      return true
    })
    await assertCleanedUp(s.allocationId)
  })

  it('reports a missing binary as failed with exit code 127 and leaves no container', async function () {
    const s = spec(['/bin/no-such-program'])
    const result = await executor().run(s)
    assert.equal(result.status, 'failed')
    assert.equal(result.exitCode, 127)
    assert.match(result.reason ?? '', /^cannot start: .*no-such-program/)
    await assertCleanedUp(s.allocationId)
  })

  it('caps each log stream at maxLogBytes', async function () {
    const result = await executor({ maxLogBytes: 1000 }).run(spec(['sh', '-c', 'yes | head -c 100000']))
    assert.equal(result.status, 'completed', result.reason)
    assert.equal(result.truncated, true)
    assert.equal(result.stdout, 'y\n'.repeat(500))
  })

  it('stops reading output once both streams are over the cap; the run goes on and completes', async function () {
    // 2 MB on each stream, then an output file written after the attach was closed.
    const script =
      'head -c 2000000 /dev/zero | tr "\\0" a; head -c 2000000 /dev/zero | tr "\\0" b >&2; echo after > /outputs/after.txt'
    const result = await executor({ maxLogBytes: 4096 }).run(spec(['sh', '-c', script]))
    assert.equal(result.status, 'completed', result.reason)
    assert.equal(result.truncated, true)
    assert.equal(result.stdout, 'a'.repeat(4096))
    assert.equal(result.stderr, 'b'.repeat(4096))
    assert.deepEqual(
      result.outputs.map((o) => [o.path, o.size]),
      [['after.txt', 6]],
    )
  })

  it('fails a run whose outputs exceed maxOutputBytes', async function () {
    const s = spec(['sh', '-c', 'head -c 2000 /dev/zero > /outputs/big'])
    const result = await executor({ maxOutputBytes: 1000 }).run(s)
    assert.equal(result.status, 'failed')
    assert.equal(result.reason, 'outputs exceed 1000 bytes')
    assert.deepEqual(result.outputs, [])
    await assertCleanedUp(s.allocationId)
  })

  it('does not follow symlinks or open FIFOs left in /outputs', async function () {
    const script = 'ln -s /etc/passwd /outputs/link; mkfifo /outputs/fifo; echo ok > /outputs/real'
    const result = await executor().run(spec(['sh', '-c', script]))
    assert.equal(result.status, 'completed', result.reason)
    assert.deepEqual(
      result.outputs.map((o) => o.path),
      ['real'],
    )
  })

  it('mounts staged inputs read-only at /inputs', async function () {
    const store = new BlobStore({ dir: join(workDir, 'blobs') })
    await store.start()
    const id = await store.put(Buffer.from('input data\n'))
    const inputsDir = join(workDir, `inputs-${randomBytes(4).toString('hex')}`)
    await stageInputs(store, [{ path: 'd/in.txt', sha256: id, size: 11 }], inputsDir)
    const script =
      'cat /inputs/d/in.txt; echo x > /inputs/d/in.txt || echo input-read-only; touch /inputs/new || echo dir-read-only'
    const result = await executor().run(spec(['sh', '-c', script], { inputsDir }))
    assert.equal(result.status, 'completed', result.reason)
    assert.equal(result.stdout, 'input data\ninput-read-only\ndir-read-only\n')
    assert.equal(readFileSync(join(inputsDir, 'd/in.txt'), 'utf8'), 'input data\n', 'the input is unchanged')
  })

  it('stops a job at its disk quota and says so, while a job within it completes', async function () {
    if (process.getuid?.() !== 0) this.skip() // the quota needs root (loop mounts)
    const ex = executor()
    assert.equal((await ex.capabilities()).diskQuota, true)
    const within = await ex.run(
      spec(['sh', '-c', 'head -c 4194304 /dev/zero > /outputs/four && echo wrote'], { diskBytes: 16 * MiB }),
    )
    assert.equal(within.status, 'completed', within.reason)
    assert.deepEqual(
      within.outputs.map((o) => [o.path, o.size]),
      [['four', 4 * MiB]],
    )

    const s = spec(['sh', '-c', 'dd if=/dev/zero of=/outputs/big bs=1M count=64'], { diskBytes: 16 * MiB })
    const over = await ex.run(s)
    assert.equal(over.status, 'failed')
    assert.match(over.reason ?? '', /^disk quota exceeded \(16777216 bytes on \/outputs\)/)
    assert.match(over.stderr, /No space left on device/)
    assert.ok(
      over.outputs.every((o) => o.size <= 17 * MiB),
      'the file stopped at the quota',
    )
    const mounts = await import('node:fs/promises').then((fs) => fs.readFile('/proc/self/mountinfo', 'utf8'))
    assert.equal(mounts.includes(s.allocationId), false, 'the quota file system is unmounted')
    await assertCleanedUp(s.allocationId)
  })

  it('re-attaches to a container whose executor process was SIGKILLed, and finishes the run', async function () {
    this.timeout(40_000)
    // The job waits for a file the test drops into its /outputs, so the kill lands mid-run.
    const s = spec(
      [
        'sh',
        '-c',
        'echo before; until [ -f /outputs/go ]; do sleep 0.1; done; echo after; echo out > /outputs/r',
      ],
      { timeoutSeconds: 30, diskBytes: process.getuid?.() === 0 ? 16 * MiB : 0 },
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
    const started = await new Promise<string>((resolve, reject) => {
      let out = ''
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString()
        const m = /started (\w+)/.exec(out)
        if (m !== null) resolve(m[1])
      })
      child.once('exit', (code) => reject(new Error(`fixture exited (${code}) before the container started`)))
    })
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGKILL')
    await exited

    const ex = executor()
    const managed = await ex.listRuns()
    const mine = managed.find((m) => m.allocationId === s.allocationId)
    assert.deepEqual(mine, {
      allocationId: s.allocationId,
      jobId: s.jobId,
      handle: started,
      running: true,
    })

    const events: ExecutionEvent[] = []
    const resultP = ex.reattach(s, {
      onEvent: (e) => {
        events.push(e)
        // Release the job only once we are attached: its output after this point is live.
        if (e.type === 'reattached') writeFileSync(join(workDir, s.allocationId, 'outputs', 'go'), '')
      },
    })
    const result = await resultP
    assert.equal(result.status, 'completed', result.reason)
    assert.equal(result.stdout, 'before\nafter\n', 'output from before the kill is replayed')
    assert.deepEqual(
      result.outputs.map((o) => o.path),
      ['go', 'r'],
    )
    assert.deepEqual(events[0], { type: 'reattached', handle: started, running: true })
    await assertCleanedUp(s.allocationId)
    await assert.rejects(ex.reattach(s), { name: 'AllocationNotFoundError' })
  })

  it('removes the container and folder of an allocation nobody runs any more', async function () {
    const s = spec(['sleep', '30'])
    const ex = executor()
    const controller = new AbortController()
    const running = ex.run(s, {
      signal: controller.signal,
      onEvent: (e) => {
        if (e.type === 'started') controller.abort()
      },
    })
    await running // a quick way to get a container created and cleaned by run itself
    await assertCleanedUp(s.allocationId)
    // Now an orphan: a container created outside any run, as a crash would leave.
    const orphan = spec(['sleep', '30'])
    const c = await docker.createContainer({
      name: `dms-${orphan.allocationId}`,
      Image: IMAGE,
      Cmd: ['sleep', '30'],
      Labels: {
        'dms.managed': 'true',
        'dms.owner': 'local',
        'dms.allocation': orphan.allocationId,
        'dms.job': orphan.jobId,
      },
    })
    await c.start()
    mkdirSync(join(workDir, orphan.allocationId, 'outputs'), { recursive: true })
    assert.ok((await ex.listRuns()).some((m) => m.allocationId === orphan.allocationId && m.running))
    const other = new DockerExecutor({ log: silentLogger }, { workDir, owner: 'another-provider' })
    assert.equal(
      (await other.listRuns()).some((m) => m.allocationId === orphan.allocationId),
      false,
      "another owner's executor does not see it",
    )
    await ex.removeAllocation(orphan.allocationId)
    await assertCleanedUp(orphan.allocationId)
  })

  it('tries a pull when pulling is on, and says why it failed', async function () {
    const image = '127.0.0.1:9/dms-nothing:1'
    const ex = executor({ pullImages: true })
    assert.equal(await ex.hasArtifact({ kind: 'image', ref: image }), true)
    assert.equal(await executor().hasArtifact({ kind: 'image', ref: image }), false)
    const s = spec(['sh', '-c', ':'], { image })
    await assert.rejects(ex.run(s), (err: Error & { pullError?: string }) => {
      assert.equal(err.name, 'ImageNotFoundError')
      assert.match(err.message, /could not be pulled/)
      assert.ok((err.pullError ?? '') !== '')
      return true
    })
    await assertCleanedUp(s.allocationId)
  })
})
