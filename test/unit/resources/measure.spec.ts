import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import type { EngineCapabilities } from '../../../dms/executor/engine.js'
import { MachineMeter, measureMachine, mountFor, parseCpuInfoMHz } from '../../../dms/resources/measure.js'

const DOCKER: EngineCapabilities = {
  name: 'docker',
  version: '20.10.24',
  available: true,
  artifactKinds: ['image'],
  gpus: true,
  networkPolicies: ['none', 'open'],
  diskQuota: false,
  fetchesArtifacts: false,
}

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

  it('reports each offered engine as it answers, in order', async () => {
    const down = { ...DOCKER, available: false, why: 'connect ENOENT /var/run/docker.sock' }
    const info = await measureMachine({
      dataDir: dir,
      engines: [
        { capabilities: () => Promise.resolve(DOCKER) },
        { capabilities: () => Promise.resolve(down) },
      ],
    })
    assert.deepEqual(info.engines, [DOCKER, down])
  })

  it('reports an engine whose probe throws as unavailable, with the reason', async () => {
    const info = await measureMachine({
      dataDir: dir,
      engines: [{ capabilities: () => Promise.reject(new Error('probe broke')) }],
    })
    assert.equal(info.engines.length, 1)
    assert.equal(info.engines[0].available, false)
    assert.equal(info.engines[0].why, 'probe broke')
  })

  it('reports no engines when none is offered', async () => {
    const info = await measureMachine({ dataDir: dir })
    assert.deepEqual(info.engines, [])
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
          engines: [
            {
              capabilities: () => {
                probes++
                return Promise.resolve(DOCKER)
              },
            },
          ],
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
