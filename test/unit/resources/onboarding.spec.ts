import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { silentLogger } from '../../../dms/log.js'
import { DEFAULT_PRICES, hostReserve, maxOffer } from '../../../dms/resources/host-reserve.js'
import { ResourceLedger } from '../../../dms/resources/ledger.js'
import { Onboarding } from '../../../dms/resources/onboarding.js'
import type { MachineInfo, Resources } from '../../../dms/resources/types.js'
import { openDb, type Db } from '../../../dms/store/db.js'
import { lockDirect } from '../../helpers/ledger.js'

const GiB = 1024 ** 3
const T0 = 1_700_000_000_000

/** A 2-core, 8 GiB machine with 100 GiB free of 200 GiB and two GPUs (indices 0 and 1). */
function machine(over: Partial<MachineInfo> = {}): MachineInfo {
  return {
    cpu: { cores: 2, model: 'Test CPU', arch: 'x64', speedGHz: 2.5 },
    memoryBytes: 8 * GiB,
    disk: { path: '/', totalBytes: 200 * GiB, freeBytes: 100 * GiB },
    gpus: [
      { index: 0, vendor: 'NVIDIA', model: 'T4', memoryBytes: 16 * GiB },
      { index: 1, vendor: 'NVIDIA', model: 'T4', memoryBytes: 16 * GiB },
    ],
    os: { platform: 'linux', distro: 'Debian', release: '12', kernel: '6.1' },
    engines: [],
    measuredAt: T0,
    ...over,
  }
}

const res = (cpu: number, memoryGiB: number, diskGiB = 0, gpus = 0): Resources => ({
  cpu,
  memoryBytes: memoryGiB * GiB,
  diskBytes: diskGiB * GiB,
  gpus,
})

async function rejection(p: Promise<unknown>): Promise<Error & { code?: string }> {
  try {
    await p
  } catch (err) {
    assert.ok(err instanceof Error)
    return err
  }
  assert.fail('expected a rejection')
}

describe('resources/Onboarding', () => {
  let dir: string
  let db: Db
  let ledger: ResourceLedger
  let onboarding: Onboarding
  let info: MachineInfo
  let measured: number
  const clock = { t: T0, now: () => clock.t }

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'dms-onboard-'))
    db = await openDb(dir)
    ledger = new ResourceLedger({ db, clock, log: silentLogger })
    await ledger.start()
    info = machine()
    measured = 0
    const meter = {
      get: () => Promise.resolve(info),
      refresh: () => {
        measured++
        return Promise.resolve(info)
      },
    }
    onboarding = new Onboarding({ ledger, meter, clock })
  })

  afterEach(async () => {
    await ledger.stop()
    await db.close()
    await rm(dir, { recursive: true, force: true })
  })

  describe('host reserve', () => {
    it('keeps max(0.5 core, 10%), max(1 GiB, 10%) memory and max(2 GiB, 5% of the filesystem) disk', () => {
      assert.deepEqual(hostReserve(machine()), res(0.5, 1, 10, 0))
      const big = machine({
        cpu: { cores: 16, model: '', arch: 'x64', speedGHz: 3 },
        memoryBytes: 64 * GiB,
        disk: { path: '/', totalBytes: 20 * GiB, freeBytes: 10 * GiB },
      })
      const tenth = Math.ceil(6.4 * GiB)
      assert.deepEqual(hostReserve(big), { cpu: 1.6, memoryBytes: tenth, diskBytes: 2 * GiB, gpus: 0 })
      assert.deepEqual(maxOffer(big, hostReserve(big)), {
        cpu: 14.4,
        memoryBytes: 64 * GiB - tenth,
        diskBytes: 8 * GiB,
        gpus: 2,
      })
    })

    it('never reserves more than the machine has, and takes overrides', () => {
      const tiny = machine({
        cpu: { cores: 0.25, model: '', arch: 'x64', speedGHz: 1 },
        memoryBytes: 512 * 1024 ** 2,
      })
      const r = hostReserve(tiny, { diskBytes: 0 })
      assert.deepEqual(r, { cpu: 0.25, memoryBytes: 512 * 1024 ** 2, diskBytes: 0, gpus: 0 })
      assert.deepEqual(maxOffer(tiny, r), { cpu: 0, memoryBytes: 0, diskBytes: 100 * GiB, gpus: 2 })
    })
  })

  it('onboards with defaults: all the machine allows of cpu and memory, 10 GiB disk, no GPU, default prices', async () => {
    const view = await onboarding.onboard({})
    assert.equal(measured, 1, 'the machine is measured again before onboarding')
    assert.equal(view.status, 'onboarded')
    assert.deepEqual(view.onboarded, res(1.5, 7, 10, 0))
    assert.deepEqual(view.free, res(1.5, 7, 10, 0))
    assert.deepEqual(view.offer?.prices, DEFAULT_PRICES)
    assert.deepEqual(view.offer?.gpuIndices, [])
    assert.equal(view.offer?.onboardedAt, T0)
    assert.deepEqual(view.maxOffer, res(1.5, 7, 90, 2))
    assert.deepEqual(ledger.getOffer()?.resources, res(1.5, 7, 10, 0))
  })

  it('reads human units, GPU indices and prices', async () => {
    const view = await onboarding.onboard({
      cpu: '1',
      memory: '4GiB',
      disk: '20 GiB',
      gpus: [1, 0],
      prices: { perCpuHour: 2000, minJobPrice: 5 },
    })
    assert.deepEqual(view.onboarded, res(1, 4, 20, 2))
    assert.deepEqual(view.offer?.gpuIndices, [0, 1])
    assert.deepEqual(view.offer?.prices, { ...DEFAULT_PRICES, perCpuHour: 2000, minJobPrice: 5 })
  })

  it('refuses more than the machine minus the host reserve, naming each limit', async () => {
    const err = await rejection(onboarding.onboard({ cpu: 8, memory: '8GiB' }))
    assert.equal(err.name, 'OfferExceedsMachineError')
    assert.equal(err.code, 'OFFER_EXCEEDS_MACHINE')
    assert.equal(
      err.message,
      'cannot offer 8 cores of CPU: this machine has 2 cores, minus 0.5 cores reserved for the host = 1.5 cores at most; ' +
        'cannot offer 8 GiB of memory: this machine has 8 GiB, minus 1 GiB reserved for the host = 7 GiB at most',
    )
    const disk = await rejection(onboarding.onboard({ disk: '95GiB' }))
    assert.equal(
      disk.message,
      'cannot offer 95 GiB of disk: this machine has free on its data disk 100 GiB, minus 10 GiB reserved for the host = 90 GiB at most',
    )
    assert.equal(ledger.getOffer(), undefined, 'nothing was stored')
    // Exactly the limit is fine.
    assert.deepEqual(
      (await onboarding.onboard({ cpu: '1.5', memory: '7GiB', disk: '90GiB' })).onboarded,
      res(1.5, 7, 90),
    )
  })

  it('refuses bad input with clear errors and stores nothing', async () => {
    const cases: Array<[Parameters<Onboarding['onboard']>[0], string, RegExp]> = [
      [
        { cpu: '-1' },
        'INVALID_UNIT',
        /invalid CPU amount "-1": expected a number of CPU cores greater than 0/,
      ],
      [{ cpu: 'two' }, 'INVALID_UNIT', /invalid CPU amount "two"/],
      [{ memory: '-4GiB' }, 'INVALID_UNIT', /invalid size "-4GiB": a size cannot be negative/],
      [{ memory: '4XB' }, 'INVALID_UNIT', /unknown unit "XB"; expected .*GiB/],
      [{ disk: '4q' }, 'INVALID_UNIT', /unknown unit "q"/],
      [{ cpu: '0m' }, 'INVALID_UNIT', /invalid CPU amount "0m"/],
      [
        { prices: { perCpuHour: -1 } },
        'INVALID_PRICE',
        /invalid price perCpuHour -1: prices are whole numbers/,
      ],
      [{ prices: { perCpuHour: 1.5 } }, 'INVALID_PRICE', /perCpuHour 1.5/],
      [{ prices: { perCoreHour: 1 } as never }, 'INVALID_PRICE', /perCoreHour/],
      [{ gpus: [2] }, 'UNKNOWN_GPU', /cannot offer GPU 2: this machine has no such GPU; GPUs here: 0, 1/],
      [{ gpus: [0, 0] }, 'UNKNOWN_GPU', /cannot offer GPU 0: listed twice/],
      [{ gpus: [-1] }, 'UNKNOWN_GPU', /a GPU index is a whole number/],
    ]
    for (const [req, code, message] of cases) {
      const err = await rejection(onboarding.onboard(req))
      assert.equal(err.code, code, `${JSON.stringify(req)}: ${err.message}`)
      assert.match(err.message, message)
    }
    assert.equal(ledger.getOffer(), undefined)
  })

  it('changes the offer in place: fields left out keep their values, onboardedAt stays', async () => {
    await onboarding.onboard({ cpu: 1, memory: '4GiB', disk: '20GiB', gpus: [0], prices: { perCpuHour: 7 } })
    clock.t = T0 + 1000
    const view = await onboarding.onboard({ memory: '2GiB' })
    assert.deepEqual(view.onboarded, res(1, 2, 20, 1))
    assert.deepEqual(view.offer?.gpuIndices, [0])
    assert.equal(view.offer?.prices.perCpuHour, 7)
    assert.equal(view.offer?.onboardedAt, T0)
    assert.equal(view.offer?.updatedAt, T0 + 1000)
    assert.deepEqual((await onboarding.onboard({ gpus: [] })).onboarded, res(1, 2, 20, 0))
  })

  it('refuses to drop below what is locked right now, and keeps the old offer', async () => {
    await onboarding.onboard({ cpu: 1.5, memory: '4GiB' })
    await lockDirect(ledger, 'l1', 'j1', res(1, 2))
    const err = await rejection(onboarding.onboard({ cpu: 0.5 }))
    assert.equal(err.code, 'OFFER_BELOW_COMMITTED')
    assert.match(
      err.message,
      /CPU offered 0.5 cores but 1 core is committed \(reserved 0 cores, locked 1 core/,
    )
    assert.equal(ledger.getOffer()?.resources.cpu, 1.5)
    assert.deepEqual((await onboarding.onboard({ cpu: 1 })).free, res(0, 2, 10))
  })

  it('offboards: no new reservations, live entries run to their end, onboarding again reopens', async () => {
    const notYet = await rejection(onboarding.offboard())
    assert.equal(notYet.code, 'NOT_ONBOARDED')

    await onboarding.onboard({ cpu: 1.5, memory: '4GiB' })
    await ledger.reserve('r1', 'j1', res(0.5, 1), T0 + 10_000)
    await lockDirect(ledger, 'l1', 'j2', res(0.5, 1))
    clock.t = T0 + 5
    const view = await onboarding.offboard()
    assert.equal(view.status, 'offboarded')
    assert.equal(view.offer?.withdrawnAt, T0 + 5)
    assert.deepEqual(view.free, res(0, 0), 'nothing is free for new work')
    assert.deepEqual(view.reserved, res(0.5, 1))
    assert.deepEqual(view.locked, res(0.5, 1))

    const refused = await rejection(ledger.reserve('r2', 'j3', res(0.1, 0), T0 + 10_000))
    assert.equal(refused.code, 'OFFBOARDED')
    assert.match(refused.message, /run 'dms onboard'/)
    assert.equal((await rejection(lockDirect(ledger, 'l2', 'j4', res(0.1, 0)))).code, 'OFFBOARDED')
    // What was promised still runs: the reservation locks, the lock allocates, both release.
    await ledger.lock('r1')
    await ledger.allocate('l1')
    assert.equal(await ledger.release('r1'), true)
    assert.equal(await ledger.release('l1'), true)
    // Offboarding twice changes nothing.
    assert.equal((await onboarding.offboard()).offer?.withdrawnAt, T0 + 5)

    clock.t = T0 + 10
    const back = await onboarding.onboard({})
    assert.equal(back.status, 'onboarded')
    assert.equal(back.offer?.withdrawnAt, undefined)
    assert.equal(back.offer?.onboardedAt, T0 + 10)
    assert.deepEqual(back.free, res(1.5, 4, 10))
    await ledger.reserve('r3', 'j5', res(1, 1), T0 + 10_000)
  })

  it('keeps an offboarded offer offboarded across a restart', async () => {
    await onboarding.onboard({ cpu: 1 })
    await onboarding.offboard()
    await ledger.stop()
    ledger = new ResourceLedger({ db, clock, log: silentLogger })
    await ledger.start()
    const view = await new Onboarding({
      ledger,
      meter: { get: () => Promise.resolve(info), refresh: () => Promise.resolve(info) },
      clock,
    }).view()
    assert.equal(view.status, 'offboarded')
    assert.equal((await rejection(ledger.reserve('r', 'j', res(0.5, 0), T0 + 1000))).code, 'OFFBOARDED')
  })

  it('shows the machine, reserve, offer and every state in one view', async () => {
    const empty = await onboarding.view()
    assert.equal(empty.status, 'not-onboarded')
    assert.equal(empty.offer, null)
    assert.deepEqual(empty.onboarded, res(0, 0))
    assert.deepEqual(empty.machineResources, res(2, 8, 100, 2))
    assert.equal(measured, 0, 'view uses the cached measurement')
    await onboarding.view({ refresh: true })
    assert.equal(measured, 1)

    await onboarding.onboard({ cpu: 1.5, memory: '6GiB', disk: '50GiB', gpus: [0, 1] })
    await ledger.reserve('r', 'j1', res(0.25, 1), T0 + 1000)
    await lockDirect(ledger, 'l', 'j2', res(0.5, 1, 10, 1))
    await lockDirect(ledger, 'a', 'j3', res(0.5, 2, 20, 1))
    await ledger.allocate('a')
    const v = await onboarding.view()
    assert.deepEqual(
      [v.onboarded, v.reserved, v.locked, v.allocated, v.free],
      [res(1.5, 6, 50, 2), res(0.25, 1), res(0.5, 1, 10, 1), res(0.5, 2, 20, 1), res(0.25, 2, 20, 0)],
    )
    assert.deepEqual(
      v.entries.map((e) => [e.id, e.state]),
      [
        ['a', 'allocated'],
        ['l', 'locked'],
        ['r', 'reserved'],
      ],
    )
  })
})
