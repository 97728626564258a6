import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { MachineMeter, measureMachine, mountFor, parseCpuInfoMHz } from '../../../dms/resources/measure.js'

describe('resources/measure', () => {
  let dir: string

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'dms-measure-'))
  })

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('measures CPU, memory, the data dir disk and the OS', async () => {
    const info = await measureMachine({ dataDir: dir, clock: { now: () => 42 } })
    assert.ok(info.cpu.cores >= 1, `cores ${info.cpu.cores}`)
    assert.ok(
      info.cpu.speedGHz > 0,
      `speed ${info.cpu.speedGHz} GHz (the /proc/cpuinfo fallback where si reads 0)`,
    )
    assert.notEqual(info.cpu.model, '')
    assert.equal(info.cpu.arch, os.arch())
    assert.ok(info.memoryBytes > 0)
    assert.ok(info.disk.totalBytes > 0, `disk ${JSON.stringify(info.disk)}`)
    assert.ok(info.disk.freeBytes >= 0 && info.disk.freeBytes <= info.disk.totalBytes)
    assert.ok(dir.startsWith(info.disk.path), `${info.disk.path} holds ${dir}`)
    assert.ok(Array.isArray(info.gpus))
    assert.equal(info.os.platform, os.platform())
    assert.equal(info.measuredAt, 42)
  })

  it('measures the disk of a data dir that does not exist yet', async () => {
    const info = await measureMachine({ dataDir: path.join(dir, 'not', 'yet') })
    assert.ok(info.disk.totalBytes > 0)
  })

  it('reports Docker unavailable, with the reason, when the probe throws', async () => {
    const info = await measureMachine({
      dataDir: dir,
      dockerInfo: () => Promise.reject(new Error('connect ENOENT /var/run/docker.sock')),
    })
    assert.deepEqual(info.docker, { available: false, error: 'connect ENOENT /var/run/docker.sock' })
  })

  it('reports Docker available with its version when the probe answers', async () => {
    const info = await measureMachine({
      dataDir: dir,
      dockerInfo: () => Promise.resolve({ version: '20.10.24' }),
    })
    assert.deepEqual(info.docker, { available: true, version: '20.10.24' })
  })

  it('reports Docker unavailable when no probe is configured', async () => {
    const info = await measureMachine({ dataDir: dir })
    assert.equal(info.docker.available, false)
    assert.match(info.docker.error!, /no container engine/)
  })

  it('reads the clock from /proc/cpuinfo text', () => {
    const text = 'processor\t: 0\nmodel name\t: AMD EPYC\ncpu MHz\t\t: 2596.122\ncache size\t: 512 KB\n'
    assert.equal(parseCpuInfoMHz(text), 2596.122)
    assert.equal(parseCpuInfoMHz('processor\t: 0\n'), undefined)
    assert.equal(parseCpuInfoMHz('cpu MHz\t\t: 0.000\n'), undefined)
  })

  it('picks the mount with the longest matching prefix, on path boundaries', () => {
    const mounts = [{ mount: '/' }, { mount: '/data' }, { mount: '/data/fast' }, { mount: '/dat' }]
    assert.equal(mountFor(mounts, '/data/fast/dms')?.mount, '/data/fast')
    assert.equal(mountFor(mounts, '/data/slow')?.mount, '/data')
    assert.equal(mountFor(mounts, '/data')?.mount, '/data')
    assert.equal(mountFor(mounts, '/database')?.mount, '/', '/dat and /data do not hold /database')
    assert.equal(mountFor([{ mount: '/data' }], '/home'), undefined)
  })

  describe('MachineMeter', () => {
    it('measures once, caches, and measures again on refresh', async () => {
      let t = 1
      let probes = 0
      const meter = new MachineMeter(
        {
          clock: { now: () => t++ },
          dockerInfo: () => {
            probes++
            return Promise.resolve({ version: '1' })
          },
        },
        { dataDir: dir },
      )
      const [a, b] = await Promise.all([meter.get(), meter.get()])
      assert.equal(a, b, 'concurrent callers share one measurement')
      assert.equal(await meter.get(), a)
      assert.equal(probes, 1)
      const c = await meter.refresh()
      assert.equal(probes, 2)
      assert.ok(c.measuredAt > a.measuredAt)
      assert.equal(await meter.get(), c)
    })
  })
})
