import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ApiClient } from '../../../dms/api/client.js'
import { loadNodeConfig, type NodeConfig } from '../../../dms/config.js'
import { lockDirect } from '../../helpers/ledger.js'
import { TEST_PASSPHRASE } from '../../helpers/network.js'
import { DmsNode } from '../../../dms/node.js'
import type { ResourcesView } from '../../../dms/resources/onboarding.js'

const MiB = 1024 ** 2
const GiB = 1024 ** 3

const configOffer = {
  cpu: 1,
  memoryBytes: 512 * MiB,
  diskBytes: GiB,
  gpus: 0,
  prices: { perCpuHour: 1000, perGiBMemoryHour: 10, perGiBDiskHour: 0, perGpuHour: 0, minJobPrice: 1 },
}

/** Runs the built `dms` CLI (as the other CLI tests do); resolves with its exit code and output (never rejects). */
function dms(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['bin/dms.js', ...args],
      { env: { ...process.env, DMS_DATA_DIR: undefined } },
      (err, stdout, stderr) => {
        const code = err === null ? 0 : typeof err.code === 'number' ? err.code : 1
        resolve({ code, stdout, stderr })
      },
    )
  })
}

describe('onboarding through the REST API and the dms CLI', function () {
  this.timeout(60_000)
  let root: string
  let dataDir: string
  let node: DmsNode | undefined

  const cfg = (over: Partial<NodeConfig> = {}): NodeConfig => ({
    dataDir,
    oneHost: true,
    provider: { contractDb: '12D3KooWNoContractDbInThisTest', offer: configOffer },
    ...over,
  })
  const start = async (c: NodeConfig = cfg()) => {
    node = new DmsNode(c, { passphrase: TEST_PASSPHRASE })
    await node.start()
    return node
  }

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'dms-onboard-'))
    dataDir = join(root, 'provider')
  })
  afterEach(async () => {
    await node?.stop()
    node = undefined
    await rm(root, { recursive: true, force: true })
  })

  it('serves the offer: config seeds it, PUT changes it in place, DELETE withdraws it, a restart keeps it', async () => {
    const n = await start()
    const api = new ApiClient(n.socketPath!)
    const first = await api.ok<ResourcesView>('GET', '/v1/resources')
    assert.equal(first.status, 'onboarded')
    assert.deepEqual(first.onboarded, { cpu: 1, memoryBytes: 512 * MiB, diskBytes: GiB, gpus: 0 })
    assert.ok(first.machine.cpu.cores >= 1)
    assert.equal(first.machineResources.cpu, first.machine.cpu.cores)

    const changed = await api.ok<ResourcesView>('PUT', '/v1/resources/offer', {
      cpu: 0.5,
      memory: '256MiB',
      prices: { perCpuHour: 1234 },
    })
    assert.deepEqual(changed.onboarded, { cpu: 0.5, memoryBytes: 256 * MiB, diskBytes: GiB, gpus: 0 })
    assert.equal(changed.offer?.prices.perCpuHour, 1234)
    assert.equal(changed.offer?.prices.perGiBMemoryHour, 10, 'prices left out are kept')
    assert.deepEqual(n.ledger!.getOffer()?.resources, changed.onboarded, 'the provider bids from it at once')

    // A lock taken now cannot be offered away.
    await lockDirect(n.ledger!, 'l1', 'job-1', { cpu: 0.5, memoryBytes: 128 * MiB, diskBytes: 0, gpus: 0 })
    const below = await api.call<{ error: { code: string; message: string } }>('PUT', '/v1/resources/offer', {
      cpu: 0.25,
    })
    assert.equal(below.status, 409)
    assert.equal(below.body.error.code, 'OFFER_BELOW_COMMITTED')
    assert.match(below.body.error.message, /locked 0.5 cores/)

    const off = await api.ok<ResourcesView>('DELETE', '/v1/resources/offer')
    assert.equal(off.status, 'offboarded')
    assert.deepEqual(off.free, { cpu: 0, memoryBytes: 0, diskBytes: 0, gpus: 0 })
    assert.equal(off.locked.cpu, 0.5, 'the lock runs to its end')

    // The offer is state: a restart keeps it offboarded and ignores the config's offer.
    await n.stop()
    const again = await start()
    const after = await new ApiClient(again.socketPath!).ok<ResourcesView>('GET', '/v1/resources')
    assert.equal(after.status, 'offboarded')
    assert.deepEqual(after.onboarded, { cpu: 0.5, memoryBytes: 256 * MiB, diskBytes: GiB, gpus: 0 })
    assert.deepEqual(
      after.entries.map((e) => [e.id, e.state]),
      [['l1', 'locked']],
    )
  })

  it('answers mistakes with a status, a stable code and the limit', async () => {
    const n = await start()
    const api = new ApiClient(n.socketPath!)
    type Err = { error: { code: string; message: string; field?: string } }
    const cases: Array<[unknown, number, string, RegExp]> = [
      [
        { cpu: 4096 },
        422,
        'OFFER_EXCEEDS_MACHINE',
        /^cannot offer 4096 cores of CPU: this machine has \d+ cores?, minus [\d.]+ cores? reserved for the host = [\d.]+ cores? at most$/,
      ],
      [{ memroy: '1GiB' }, 400, 'INVALID_REQUEST', /unknown field "memroy"/],
      [{ gpus: ['a'] }, 400, 'INVALID_REQUEST', /body\/gpus\/0/],
      [{ prices: { perCpuHour: -1 } }, 400, 'INVALID_REQUEST', /body\/prices\/perCpuHour/],
      [{ memory: '-1GiB' }, 400, 'INVALID_UNIT', /a size cannot be negative/],
      [{ disk: '5 parsecs' }, 400, 'INVALID_UNIT', /unknown unit "parsecs"/],
      [{ gpus: [7] }, 400, 'UNKNOWN_GPU', /cannot offer GPU 7/],
    ]
    for (const [body, status, code, message] of cases) {
      const res = await api.call<Err>('PUT', '/v1/resources/offer', body)
      assert.equal(res.status, status, JSON.stringify([body, res.body]))
      assert.equal(res.body.error.code, code)
      assert.match(res.body.error.message, message)
    }
    assert.equal(n.ledger!.getOffer()?.resources.cpu, 1, 'no mistake changed the offer')
    const bad = await api.call<Err>('GET', '/v1/resources?refresh=maybe')
    assert.equal(bad.status, 400)
  })

  it('refuses resource routes on a node that is not a provider', async () => {
    const n = await start({ dataDir })
    const res = await new ApiClient(n.socketPath!).call<{ error: { code: string } }>('GET', '/v1/resources')
    assert.equal(res.status, 409)
    assert.equal(res.body.error.code, 'NOT_A_PROVIDER')
  })

  it('dms onboard/resources/offboard talk to the daemon, or open the data dir when it is stopped', async () => {
    // No daemon: the CLI writes the offer into the data dir's database.
    const offline = await dms([
      'onboard',
      '--data-dir',
      dataDir,
      '--cpu',
      '0.5',
      '--memory',
      '128MiB',
      '--disk',
      '1GiB',
    ])
    assert.equal(offline.code, 0, offline.stderr)
    assert.match(offline.stdout, /^onboarded: 0.5 cores, 128 MiB memory, 1 GiB disk, 0 GPUs/)

    // The daemon starts with the onboarded offer, not the config's.
    const n = await start()
    assert.deepEqual(n.ledger!.getOffer()?.resources, {
      cpu: 0.5,
      memoryBytes: 128 * MiB,
      diskBytes: GiB,
      gpus: 0,
    })

    const shown = await dms(['resources', '--data-dir', dataDir, '--json'])
    assert.equal(shown.code, 0, shown.stderr)
    const view = JSON.parse(shown.stdout) as ResourcesView
    assert.equal(view.status, 'onboarded')
    assert.deepEqual(view.free, { cpu: 0.5, memoryBytes: 128 * MiB, diskBytes: GiB, gpus: 0 })

    const table = await dms(['resources', '--data-dir', dataDir])
    assert.match(table.stdout, /^onboarded\s+0.5 cores\s+128 MiB\s+1 GiB\s+0 GPUs$/m)
    assert.match(table.stdout, /^free\s+0.5 cores\s+128 MiB\s+1 GiB\s+0 GPUs$/m)

    const tooMuch = await dms(['onboard', '--data-dir', dataDir, '--cpu', '4096'])
    assert.equal(tooMuch.code, 1)
    assert.match(
      tooMuch.stderr,
      /^dms: cannot offer 4096 cores of CPU: this machine has \d+ cores?, minus [\d.]+ cores? reserved for the host = [\d.]+ cores? at most\n$/,
    )
    const badUnit = await dms(['onboard', '--data-dir', dataDir, '--memory', '4q'])
    assert.equal(badUnit.code, 1)
    assert.match(badUnit.stderr, /^dms: invalid size "4q": unknown unit "q"/)
    const badPrice = await dms(['onboard', '--data-dir', dataDir, '--price-cpu', '-5'])
    assert.match(badPrice.stderr, /^dms: --price-cpu must be a whole number of micro-tokens/)

    const changed = await dms(['onboard', '--data-dir', dataDir, '--memory', '256MiB'])
    assert.equal(changed.code, 0, changed.stderr)
    assert.deepEqual(n.ledger!.getOffer()?.resources, {
      cpu: 0.5,
      memoryBytes: 256 * MiB,
      diskBytes: GiB,
      gpus: 0,
    })

    const off = await dms(['offboard', '--data-dir', dataDir])
    assert.equal(off.code, 0, off.stderr)
    assert.match(off.stdout, /^offboarded: no new bids/)
    assert.notEqual(n.ledger!.getOffer()?.withdrawnAt, undefined)
  })

  it('dms onboard --price-fixed/--price-per-result write provider.price into --config, whose data dir it onboards', async () => {
    const file = join(root, 'provider.json')
    // A config as `dms run -c` checks it: a contract-db that is a peer id (this test reaches none).
    const provider = {
      contractDb: '12D3KooWAq3nNWkBVHYBAz9wkgcxUV2d6cnDvSFx3XFe2GvF1Pbk',
      offer: configOffer,
    }
    const text = `${JSON.stringify(cfg({ provider }), null, 2)}\n`
    await writeFile(file, text, { mode: 0o600 })
    const refusals: Array<[string[], string]> = [
      [
        ['--price-fixed', '700', '--price-cpu', '5'],
        '--price-fixed prices a whole job and --price-cpu its time by the hour: give one or the other',
      ],
      [
        ['--price-fixed', '7', '--price-per-result', '7'],
        '--price-per-result and --price-fixed are two price models: give one of them',
      ],
      [
        ['--price-fixed', '-7'],
        '--price-fixed must be a whole number of micro-tokens from 0 to 1000000000000, got "-7"',
      ],
    ]
    for (const [flags, message] of refusals) {
      const res = await dms(['onboard', '-c', file, ...flags])
      assert.deepEqual([res.code, res.stderr], [1, `dms: ${message}\n`])
    }
    const noConfig = await dms(['onboard', '--data-dir', dataDir, '--price-per-result', '500'])
    assert.equal(
      noConfig.stderr,
      "dms: --price-per-result is written into the node's config (provider.price): give its file with -c/--config <file>\n",
    )
    assert.equal(await readFile(file, 'utf8'), text, 'no refusal changed the config')

    // No daemon, no --data-dir: the config's data dir is onboarded, and its price set.
    const fixed = await dms(['onboard', '-c', file, '--price-fixed', '700', '--cpu', '0.5'])
    assert.equal(fixed.code, 0, fixed.stderr)
    assert.match(
      fixed.stdout,
      /^price: 700 fixed, written to .*provider\.json \(provider\.price\); a running node bids it from its next start$/m,
    )
    const written = loadNodeConfig(JSON.parse(await readFile(file, 'utf8')))
    assert.deepEqual(written.provider?.price, { model: 'fixed', currency: 'micro-token', amount: 700 })
    assert.equal((await stat(file)).mode & 0o777, 0o600)
    const n = await start(written)
    assert.equal(n.ledger!.getOffer()?.resources.cpu, 0.5, 'the offer went into the config data dir')

    // The per-hour flags take the node back to per hour: the price goes, the rates change at once.
    const hourly = await dms(['onboard', '-c', file, '--price-cpu', '2000', '--json'])
    assert.equal(hourly.code, 0, hourly.stderr)
    assert.deepEqual((JSON.parse(hourly.stdout) as { config: unknown }).config, { path: file, price: null })
    assert.equal(loadNodeConfig(JSON.parse(await readFile(file, 'utf8'))).provider?.price, undefined)
    assert.equal(n.ledger!.getOffer()?.prices.perCpuHour, 2000)

    const help = await dms(['onboard', '--help'])
    assert.match(help.stdout, /--price-per-result <n>/)
    assert.match(help.stdout, /--price-fixed <n>/)
    assert.match(help.stdout, /-c, --config <file>/)
  })

  it('says the data dir is in use when a daemon holds it without a socket', async () => {
    await start(cfg({ api: false }))
    const res = await dms(['resources', '--data-dir', dataDir])
    assert.equal(res.code, 1)
    assert.match(res.stderr, /^dms: another dms is using the data directory .*: stop it first/)
  })
})
