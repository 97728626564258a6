/**
 * Issue 31: a host that cannot run the process engine is told what is missing, and how to get it,
 * rather than failing obscurely at the first run. Fake tool folders and cgroup trees in a temp dir.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ProcessEngine } from '../../../dms/executor/process/process-engine.js'
import { checkPrerequisites, TOOLS } from '../../../dms/executor/process/prerequisites.js'
import { silentLogger } from '../../../dms/log.js'
import { SINGLE_MEMBER } from '../../../dms/workload/workload.js'

describe('process engine prerequisites', () => {
  let dir: string
  let bin: string
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'dms-process-pre-'))
    bin = join(dir, 'bin')
    mkdirSync(bin)
  })
  afterEach(() => rmSync(dir, { recursive: true, force: true }))

  const tools = (except: string[] = []): void => {
    for (const [tool] of TOOLS) {
      if (except.includes(tool)) continue
      writeFileSync(join(bin, tool), '#!/bin/sh\n')
      chmodSync(join(bin, tool), 0o755)
    }
  }
  const cgroupV1 = (controllers = ['cpu', 'cpuacct', 'memory', 'pids']): string => {
    const root = join(dir, 'cg1')
    for (const c of controllers) {
      mkdirSync(join(root, c), { recursive: true })
      writeFileSync(join(root, c, 'cgroup.procs'), '')
    }
    return root
  }
  const cgroupV2 = (controllers: string): string => {
    const root = join(dir, 'cg2')
    mkdirSync(root)
    writeFileSync(join(root, 'cgroup.controllers'), `${controllers}\n`)
    return root
  }

  it('is ready as root with the tools and cgroup v1 or v2', async () => {
    tools()
    assert.deepEqual(await checkPrerequisites({ path: bin, uid: 0, cgroupRoot: cgroupV1() }), {
      ok: true,
      cgroup: 1,
    })
    assert.deepEqual(
      await checkPrerequisites({ path: bin, uid: 0, cgroupRoot: cgroupV2('cpuset cpu io memory pids') }),
      { ok: true, cgroup: 2 },
    )
  })

  it('names each missing tool with its package, root, and the missing controllers, all at once', async () => {
    tools(['unshare', 'setpriv', 'mount'])
    const pre = await checkPrerequisites({ path: bin, uid: 1000, cgroupRoot: cgroupV2('cpu io') })
    assert.equal(pre.ok, false)
    assert.equal(
      !pre.ok && pre.why,
      'missing: root (the process engine makes namespaces and cgroups: run dms as root); ' +
        'unshare (apt-get install util-linux); setpriv (apt-get install util-linux); ' +
        'mount (apt-get install mount); cgroup v2 controllers memory, pids',
    )
  })

  it('names the cgroup v1 controllers missing where there is no v2 either', async () => {
    tools()
    const pre = await checkPrerequisites({ path: bin, uid: 0, cgroupRoot: cgroupV1(['cpu', 'cpuacct']) })
    assert.deepEqual(pre, { ok: false, why: 'missing: cgroup controllers memory, pids' })
  })

  it('makes the engine say it is unavailable, and why, and refuse a run with a code', async () => {
    const engine = new ProcessEngine(
      { log: silentLogger },
      { workDir: join(dir, 'work'), cgroupRoot: join(dir, 'no-cgroups') },
    )
    const can = await engine.capabilities()
    assert.equal(can.available, false)
    assert.match(can.why ?? '', /^missing: .*cgroup controllers cpu, cpuacct, memory, pids/)
    const allocationId = `pre-${randomBytes(4).toString('hex')}`
    await assert.rejects(
      engine.run({
        jobId: 'j',
        allocationId,
        timeoutSeconds: 5,
        workload: {
          members: [
            {
              name: SINGLE_MEMBER,
              artifact: { kind: 'runtime', path: '/bin/sh' },
              command: ['/bin/sh', '-c', 'true'],
              env: {},
              network: 'none',
              resources: { cpu: 1, memoryBytes: 64 * 1024 * 1024 },
            },
          ],
        },
      }),
      (err: Error & { code?: string; peerMessage?: string }) => {
        assert.equal(err.name, 'SandboxUnavailableError')
        assert.equal(err.code, 'EXECUTOR_UNAVAILABLE')
        assert.doesNotMatch(err.peerMessage ?? '', /missing|apt-get|cgroup/, 'no host detail for a peer')
        return true
      },
    )
  })
})
