/**
 * The engine-compliance suite (specs/executor.md, "Engines"), in the spirit of js-libp2p's
 * interface-compliance-tests: what every engine behind `Engine` must do, checked through the
 * interface alone. An engine's spec calls `engineCompliance(name, modulePath)`; the module (see
 * `EngineUnderTest`) builds the engine over a state folder and a workload of its artifact kind
 * running a POSIX shell script. The noop engine runs nothing and is not meant to pass.
 *
 * Checked: CPU and memory limits (over the memory limit ends `failed`, saying so), no network
 * unless asked, outputs collected and hashed into one archive, logs streamed as events, the
 * timeout (`timed_out`), cancel by signal (`cancelled`), and re-attach: a new engine object over
 * the same state, in a new process after the first was SIGKILLed, lists the run, supervises it to
 * its end and collects its result.
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Engine } from '../../dms/executor/engine.js'
import type { ExecutionEvent, ExecutionSpec } from '../../dms/executor/executor.js'
import { hashOutputs } from '../../dms/workload/outputs.js'

/** A workload the suite asks for: `sh -c script` with these limits, in the engine's artifact kind. */
export interface ComplianceWorkload {
  jobId: string
  allocationId: string
  /** A POSIX shell script; it may write files under /outputs. */
  script: string
  cpu: number
  memoryBytes: number
  timeoutSeconds: number
  network: boolean
}

/**
 * What an engine's test module exports. It is imported by the suite and, for re-attach, by a
 * child process (test/fixtures/engine-run.ts), so it is a module, not an object.
 */
export interface EngineUnderTest {
  /** A new engine object over `stateDir`; two objects over one folder see the same runs. */
  makeEngine(stateDir: string): Engine
  /** The spec that runs `w` on this engine (an image, a bundle...). */
  workload(w: ComplianceWorkload): ExecutionSpec
}

const MiB = 1024 * 1024
const sha256 = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex')

/** Interface names of the workload's network namespace, from /proc/net/dev. */
const NET_NAMES = "sed -n 's/^ *\\([^:]*\\):.*/\\1/p' /proc/net/dev | sort | tr '\\n' ' '"

/** Where an engine may fall short of the suite, each with the reason (specs/executor.md). */
export interface ComplianceOptions {
  /**
   * Each test's limit: an engine whose containers take longer to set up (podman: conmon, and a
   * CNI network for the open one) may ask for more. @default 30000
   */
  timeoutMs?: number
  /**
   * Why this engine may end a run over its memory limit without saying so (the run must still be
   * killed and fail). @default undefined: it must say "memory limit"
   */
  unnamedOom?: string
}

export function engineCompliance(name: string, modulePath: string, opts: ComplianceOptions = {}): void {
  const timeoutMs = opts.timeoutMs ?? 30_000
  describe(`engine compliance: ${name}`, function () {
    this.timeout(timeoutMs)
    let m: EngineUnderTest
    let stateDir: string
    let engine: Engine

    before(async () => {
      m = (await import(modulePath)) as EngineUnderTest
      stateDir = mkdtempSync(join(tmpdir(), `dms-engine-${name}-`))
      engine = m.makeEngine(stateDir)
    })
    after(() => rmSync(stateDir, { recursive: true, force: true }))

    const spec = (script: string, over: Partial<ComplianceWorkload> = {}): ExecutionSpec => {
      const allocationId = `c-${randomBytes(6).toString('hex')}`
      return m.workload({
        jobId: `job-${allocationId}`,
        allocationId,
        script,
        cpu: 1,
        memoryBytes: 64 * MiB,
        timeoutSeconds: 15,
        network: false,
        ...over,
      })
    }

    it('says what it runs, and that it is available', async () => {
      const can = await engine.capabilities()
      assert.equal(can.name, name)
      assert.equal(can.available, true, can.why)
      assert.ok(can.artifactKinds.length > 0)
      assert.ok(can.networkPolicies.includes('none'), 'every engine can run a workload without a network')
      assert.deepEqual(await engine.listRuns(), [], 'a fresh state holds no runs')
    })

    it('holds a busy workload to its CPU share', async () => {
      const result = await engine.run(spec('timeout 2 sh -c "while :; do :; done"; exit 0', { cpu: 0.1 }))
      assert.equal(result.status, 'completed', result.reason)
      const { wallSeconds, cpuSeconds } = result.usage
      assert.ok(wallSeconds >= 1.9, `wallSeconds ${wallSeconds}`)
      // Unthrottled, the loop would take about a core for 2 s.
      assert.ok(cpuSeconds <= 0.1 * wallSeconds + 0.3, `cpuSeconds ${cpuSeconds} at 0.1 of a core`)
    })

    it('ends a workload over its memory limit as failed, saying so', async () => {
      // tail keeps the last "line" of /dev/zero, which has no newline: it grows until killed.
      const result = await engine.run(spec('head -c 200m /dev/zero | tail', { memoryBytes: 32 * MiB }))
      assert.equal(result.status, 'failed')
      if (opts.unnamedOom !== undefined) assert.match(result.reason ?? '', /memory limit|exit code 137/)
      else assert.match(result.reason ?? '', /memory limit/)
      assert.ok(result.usage.peakMemoryBytes <= 32 * MiB, `peak ${result.usage.peakMemoryBytes}`)
    })

    it('gives no network unless asked (a loopback only), and one when asked', async () => {
      const isolated = await engine.run(spec(NET_NAMES))
      assert.equal(isolated.status, 'completed', isolated.reason)
      assert.deepEqual(isolated.stdout.trim().split(/\s+/), ['lo'])
      if (!(await engine.capabilities()).networkPolicies.includes('open')) return
      const open = await engine.run(spec(NET_NAMES, { network: true }))
      assert.equal(open.status, 'completed', open.reason)
      assert.ok(open.stdout.trim().split(/\s+/).length > 1, `interfaces: ${open.stdout}`)
    })

    it('collects /outputs into one archive, each file and the whole hashed', async () => {
      const result = await engine.run(
        spec('mkdir -p /outputs/d && printf hello > /outputs/a.txt && printf x > /outputs/d/b'),
      )
      assert.equal(result.status, 'completed', result.reason)
      assert.deepEqual(result.outputs, [
        { path: 'a.txt', sha256: sha256('hello'), size: 5 },
        { path: 'd/b', sha256: sha256('x'), size: 1 },
      ])
      assert.equal(result.outputsHash, hashOutputs(result.outputs))
      const archive = result.archive!
      assert.equal(statSync(archive.file).size, archive.size)
      assert.equal(sha256(readFileSync(archive.file)), archive.sha256)
      rmSync(archive.file)
    })

    it('streams logs as events, in order, and returns them', async () => {
      const events: ExecutionEvent[] = []
      const result = await engine.run(spec('echo one; echo two >&2; exit 3'), {
        onEvent: (e) => events.push(e),
      })
      assert.equal(result.status, 'failed')
      assert.equal(result.exitCode, 3)
      assert.equal(result.stdout, 'one\n')
      assert.equal(result.stderr, 'two\n')
      const logs = events.filter((e) => e.type === 'log')
      assert.equal(
        logs
          .filter((e) => e.stream === 'stdout')
          .map((e) => e.chunk)
          .join(''),
        'one\n',
      )
      assert.equal(
        logs
          .filter((e) => e.stream === 'stderr')
          .map((e) => e.chunk)
          .join(''),
        'two\n',
      )
      const kinds = events.map((e) => e.type).filter((t) => t !== 'usage' && t !== 'log' && t !== 'created')
      assert.deepEqual(kinds, ['started', 'exited'])
    })

    it('ends a workload at its timeout as timed_out', async () => {
      const result = await engine.run(spec('sleep 30', { timeoutSeconds: 1 }))
      assert.equal(result.status, 'timed_out')
      assert.ok(result.usage.wallSeconds < 5, `wallSeconds ${result.usage.wallSeconds}`)
    })

    it('cancels a running workload when its signal is aborted', async () => {
      const controller = new AbortController()
      const result = await engine.run(spec('echo ready; sleep 30'), {
        signal: controller.signal,
        onEvent: (e) => {
          if (e.type === 'log' && e.chunk.includes('ready')) controller.abort()
        },
      })
      assert.equal(result.status, 'cancelled')
      assert.ok(result.usage.wallSeconds < 10, `wallSeconds ${result.usage.wallSeconds}`)
    })

    it('re-attaches from a new engine object, after the process that started the run died', async () => {
      const s = spec('echo before; sleep 3; echo after; echo out > /outputs/r')
      const child = spawn(
        process.execPath,
        [
          '--import',
          'tsx',
          join(import.meta.dirname, '../fixtures/engine-run.ts'),
          modulePath,
          stateDir,
          JSON.stringify(s),
        ],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      )
      await new Promise<void>((resolve, reject) => {
        let out = ''
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString()
          if (out.includes('started ')) resolve()
        })
        child.once('exit', (code) => reject(new Error(`engine-run exited (${code}) before the start`)))
      })
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGKILL')
      await exited

      const next = m.makeEngine(stateDir)
      const runs = await next.listRuns()
      const mine = runs.filter((r) => r.allocationId === s.allocationId)
      assert.deepEqual(
        mine.map((r) => [r.jobId, r.running]),
        [[s.jobId, true]],
      )
      const events: ExecutionEvent[] = []
      const result = await next.reattach(s, { onEvent: (e) => events.push(e) })
      assert.equal(result.status, 'completed', result.reason)
      assert.equal(result.stdout, 'before\nafter\n', 'the output from before the kill is replayed')
      assert.deepEqual(
        result.outputs.map((o) => [o.path, o.sha256]),
        [['r', sha256('out\n')]],
      )
      assert.deepEqual(events[0], { type: 'reattached', handle: mine[0].handle, running: true })
      if (result.archive !== undefined) rmSync(result.archive.file)
      assert.deepEqual(
        (await next.listRuns()).filter((r) => r.allocationId === s.allocationId),
        [],
        'cleaned up after',
      )
      await assert.rejects(next.reattach(s), { name: 'AllocationNotFoundError' })
    })
  })
}
