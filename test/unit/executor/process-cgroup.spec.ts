/**
 * Issue 31: the cgroup files the process engine writes and reads, on v1 and on v2 (the GPU host's;
 * this machine runs v1, so v2 is checked here on a stand-in tree of plain files in a temp dir).
 */
import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Cgroup } from '../../../dms/executor/process/cgroup.js'

const MiB = 1024 * 1024

describe('process engine cgroups (stand-in trees)', () => {
  let root: string
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'dms-cgroup-'))
  })
  afterEach(() => rmSync(root, { recursive: true, force: true }))
  const read = (...p: string[]): string => readFileSync(join(root, ...p), 'utf8')

  it('v2: enables cpu, memory and pids down to it, limits memory without swap and pids; CPU as cpu.max', async () => {
    const cg = new Cgroup(2, 'dms/dms-a1', root)
    await cg.create({ memoryBytes: 64 * MiB, pids: 32 })
    assert.equal(read('cgroup.subtree_control'), '+cpu +memory +pids')
    assert.equal(read('dms', 'cgroup.subtree_control'), '+cpu +memory +pids')
    assert.equal(read('dms/dms-a1', 'memory.max'), String(64 * MiB))
    assert.equal(read('dms/dms-a1', 'memory.swap.max'), '0')
    assert.equal(read('dms/dms-a1', 'pids.max'), '32')
    assert.deepEqual(cg.cpuLimit(0.25), { file: join(root, 'dms/dms-a1', 'cpu.max'), value: '25000 100000' })
    assert.deepEqual(cg.dirs(), [join(root, 'dms/dms-a1')])
  })

  it('v2: reads CPU from cpu.stat, the peak from memory.peak, and the OOM kill from memory.events', async () => {
    const cg = new Cgroup(2, 'dms/dms-a2', root)
    const dir = join(root, 'dms/dms-a2')
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, 'cpu.stat'), 'usage_usec 2500000\nuser_usec 2000000\n')
    writeFileSync(join(dir, 'memory.current'), String(10 * MiB))
    writeFileSync(join(dir, 'memory.peak'), String(30 * MiB))
    writeFileSync(join(dir, 'memory.events'), 'low 0\nhigh 0\nmax 4\noom 1\noom_kill 0\n')
    assert.deepEqual(await cg.usage(), { cpuSeconds: 2.5, memoryBytes: 10 * MiB, peakMemoryBytes: 30 * MiB })
    assert.equal(await cg.oomKilled(), false, 'oom (the limit reached) is not oom_kill')
    writeFileSync(join(dir, 'memory.events'), 'low 0\nhigh 0\nmax 4\noom 1\noom_kill 1\n')
    assert.equal(await cg.oomKilled(), true)
  })

  it('v1: one folder per controller, memory and memory+swap at the limit, a 100 ms period', async () => {
    const cg = new Cgroup(1, 'dms/dms-b1', root)
    await cg.create({ memoryBytes: 32 * MiB, pids: 16 })
    assert.equal(read('memory/dms/dms-b1', 'memory.limit_in_bytes'), String(32 * MiB))
    assert.equal(read('memory/dms/dms-b1', 'memory.memsw.limit_in_bytes'), String(32 * MiB))
    assert.equal(read('pids/dms/dms-b1', 'pids.max'), '16')
    assert.equal(read('cpu/dms/dms-b1', 'cpu.cfs_period_us'), '100000')
    assert.deepEqual(cg.cpuLimit(0.001), {
      file: join(root, 'cpu/dms/dms-b1', 'cpu.cfs_quota_us'),
      value: '1000',
    })
    assert.deepEqual(
      cg.dirs(),
      ['cpu', 'cpuacct', 'memory', 'pids'].map((c) => join(root, c, 'dms/dms-b1')),
    )
    writeFileSync(
      join(root, 'memory/dms/dms-b1', 'memory.oom_control'),
      'oom_kill_disable 0\nunder_oom 0\noom_kill 2\n',
    )
    assert.equal(await cg.oomKilled(), true)
  })
})
