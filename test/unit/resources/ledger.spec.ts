import assert from 'node:assert/strict'
import { pino } from 'pino'
import { silentLogger } from '../../../dms/log.js'
import {
  EntryExistsError,
  EntryNotFoundError,
  InsufficientResourcesError,
  InvalidResourcesError,
  InvalidTransitionError,
  LedgerNotStartedError,
  NoOfferError,
  OfferBelowCommittedError,
  ReservationExpiredError,
} from '../../../dms/resources/errors.js'
import { ResourceLedger, type LedgerEntry } from '../../../dms/resources/ledger.js'
import { add, fits, sum } from '../../../dms/resources/math.js'
import { ZERO, type Resources } from '../../../dms/resources/types.js'
import { openDb, Repo, type Db } from '../../../dms/store/db.js'
import {
  closeLedger,
  lockDirect,
  offerOf,
  openLedger,
  rejection,
  T0,
  type FakeClock,
} from '../../helpers/ledger.js'
import { prng } from '../../helpers/prng.js'

const GiB = 1024 ** 3
const MiB = 1024 ** 2

function res(cpu: number, memoryGiB: number, diskGiB = 0, gpus = 0): Resources {
  return { cpu, memoryBytes: memoryGiB * GiB, diskBytes: diskGiB * GiB, gpus }
}

describe('resources/ResourceLedger', () => {
  let dir: string
  let db: Db
  let clock: FakeClock
  let ledger: ResourceLedger

  async function newLedger(): Promise<ResourceLedger> {
    const l = new ResourceLedger({ db, clock, log: silentLogger })
    await l.start()
    return l
  }

  beforeEach(async () => {
    ;({ dir, db, clock, ledger } = await openLedger('dms-ledger-'))
  })

  afterEach(() => closeLedger({ dir, db, ledger }))

  it('offers nothing before an offer is set', async () => {
    assert.deepEqual(ledger.free(), ZERO)
    assert.equal(ledger.getOffer(), undefined)
    const err = await rejection(ledger.reserve('r1', 'j1', res(1, 1), T0 + 1000))
    assert.ok(err instanceof NoOfferError)
    assert.equal(err.code, 'NO_OFFER')
    assert.match(err.message, /onboard/)
  })

  it('reserves, locks, allocates and releases, keeping the summary right', async () => {
    await ledger.setOffer(offerOf(res(4, 8, 100, 1)))
    const r = await ledger.reserve('r1', 'j1', res(1, 2, 10), T0 + 1000)
    assert.deepEqual(r, {
      id: 'r1',
      jobId: 'j1',
      resources: res(1, 2, 10),
      state: 'reserved',
      expiresAt: T0 + 1000,
      createdAt: T0,
    })
    assert.deepEqual(ledger.free(), res(3, 6, 90, 1))

    const l = await ledger.lock('r1', { expiresAt: T0 + 5000 })
    assert.equal(l.state, 'locked')
    assert.equal(l.expiresAt, T0 + 5000)
    await lockDirect(ledger, 'd1', 'j2', res(0.5, 1, 0, 1))
    assert.deepEqual(ledger.summary(), {
      offer: res(4, 8, 100, 1),
      reserved: ZERO,
      locked: res(1.5, 3, 10, 1),
      allocated: ZERO,
      free: res(2.5, 5, 90, 0),
    })

    const a = await ledger.allocate('r1')
    assert.equal(a.state, 'allocated')
    assert.equal(a.expiresAt, undefined)
    assert.deepEqual(ledger.summary().allocated, res(1, 2, 10))
    assert.deepEqual(
      ledger.entries().map((e) => [e.id, e.state]),
      [
        ['d1', 'locked'],
        ['r1', 'allocated'],
      ],
    )

    assert.equal(await ledger.release('r1'), true)
    assert.equal(await ledger.release('r1'), false, 'releasing twice is a no-op')
    assert.equal(await ledger.release('never-existed'), false)
    assert.equal(await ledger.release('d1'), true)
    assert.deepEqual(ledger.free(), res(4, 8, 100, 1))
    assert.deepEqual(ledger.entries(), [])
  })

  it('refuses what does not fit, with the shortfall and a readable message', async () => {
    await ledger.setOffer(offerOf(res(2, 2)))
    await ledger.reserve('r1', 'j1', res(1, 1), T0 + 1000)
    const err = await rejection(ledger.reserve('r2', 'j2', res(1, 2), T0 + 1000))
    assert.ok(err instanceof InsufficientResourcesError)
    assert.equal(err.name, 'InsufficientResourcesError')
    assert.equal(err.code, 'INSUFFICIENT_RESOURCES')
    assert.equal(err.message, 'not enough memory: need 2 GiB, free 1 GiB')
    assert.deepEqual(err.shortfall, res(0, 1))
    assert.deepEqual(err.need, res(1, 2))
    assert.deepEqual(err.free, res(1, 1))

    const many = await rejection(
      lockDirect(ledger, 'd1', 'j3', { cpu: 1.5, memoryBytes: 1536 * MiB, diskBytes: 0, gpus: 1 }),
    )
    assert.equal(
      many.message,
      'not enough CPU: need 1.5 cores, free 1 core; not enough memory: need 1.5 GiB, free 1 GiB; not enough GPUs: need 1 GPU, free 0 GPUs',
    )
    assert.deepEqual(
      ledger.entries().map((e) => e.id),
      ['r1'],
      'nothing was written for refused requests',
    )
  })

  it('compares fractional CPU exactly', async () => {
    await ledger.setOffer(offerOf(res(0.3, 1)))
    await ledger.reserve('a', 'j', res(0.1, 0), T0 + 1000)
    await ledger.reserve('b', 'j', res(0.2, 0), T0 + 1000)
    assert.deepEqual(ledger.free(), res(0, 1))
    const err = await rejection(ledger.reserve('c', 'j', res(0.000001, 0), T0 + 1000))
    assert.ok(err instanceof InsufficientResourcesError)
  })

  it('refuses duplicate ids, bad amounts and deadlines already past', async () => {
    await ledger.setOffer(offerOf(res(4, 8)))
    await ledger.reserve('r1', 'j1', res(1, 1), T0 + 1000)
    const dup = await rejection(ledger.reserve('r1', 'j1', res(1, 1), T0 + 1000))
    assert.ok(dup instanceof EntryExistsError)
    assert.match(dup.message, /ledger entry r1 already exists \(reserved\)/)
    assert.ok((await rejection(lockDirect(ledger, 'r1', 'j1', res(1, 1)))) instanceof EntryExistsError)

    const neg = await rejection(ledger.reserve('r2', 'j1', { ...res(1, 1), memoryBytes: -1 }, T0 + 1000))
    assert.ok(neg instanceof InvalidResourcesError)
    assert.equal(
      neg.message,
      'invalid resources for reservation r2: memoryBytes must not be negative, got -1',
    )
    const frac = await rejection(ledger.reserve('r2', 'j1', { ...res(1, 1), gpus: 0.5 }, T0 + 1000))
    assert.match(frac.message, /gpus must be a whole number/)

    const past = await rejection(ledger.reserve('r2', 'j1', res(1, 1), T0))
    assert.ok(past instanceof ReservationExpiredError)
    assert.equal(past.code, 'RESERVATION_EXPIRED')
  })

  it('enforces the order reserved -> locked -> allocated', async () => {
    await ledger.setOffer(offerOf(res(4, 8)))
    await ledger.reserve('r1', 'j1', res(1, 1), T0 + 1000)
    const early = await rejection(ledger.allocate('r1'))
    assert.ok(early instanceof InvalidTransitionError)
    assert.equal(
      early.message,
      'cannot make ledger entry r1 allocated: it is reserved, and only locked entries can be',
    )
    await ledger.lock('r1')
    await ledger.allocate('r1')
    assert.equal((await ledger.allocate('r1')).state, 'allocated', 'allocating twice is a no-op')
    assert.ok((await rejection(ledger.lock('r1'))) instanceof InvalidTransitionError)
    const missing = await rejection(ledger.lock('nope'))
    assert.ok(missing instanceof EntryNotFoundError)
    assert.equal(missing.code, 'ENTRY_NOT_FOUND')
    assert.ok((await rejection(ledger.allocate('nope'))) instanceof EntryNotFoundError)
  })

  it('lets reservations lapse at expiresAt: they stop counting at once and are deleted by the next write', async () => {
    await ledger.setOffer(offerOf(res(2, 4)))
    await ledger.reserve('r1', 'j1', res(2, 4), T0 + 1000)
    clock.t = T0 + 999
    assert.deepEqual(ledger.free(), res(0, 0))
    clock.t = T0 + 1000
    assert.deepEqual(ledger.free(), res(2, 4), 'an expired reservation no longer holds anything')
    assert.deepEqual(ledger.entries(), [])

    const err = await rejection(ledger.lock('r1'))
    assert.ok(err instanceof ReservationExpiredError)
    assert.match(
      err.message,
      /^reservation r1 expired at 2023-11-14T22:13:21\.000Z \(now 2023-11-14T22:13:21\.000Z\); reserve again$/,
    )
    const stored = await new Repo<LedgerEntry>(db, 'ledger').values()
    assert.deepEqual(stored, [], 'the expired reservation was deleted from the database')

    // The id can be reused once the reservation lapsed.
    await ledger.reserve('r1', 'j2', res(1, 1), T0 + 2000)
    assert.equal(ledger.entries()[0].jobId, 'j2')
  })

  it('releaseExpired deletes lapsed reservations and reports them', async () => {
    await ledger.setOffer(offerOf(res(2, 4)))
    await ledger.reserve('r1', 'j1', res(1, 1), T0 + 10)
    await ledger.reserve('r2', 'j1', res(1, 1), T0 + 20)
    clock.t = T0 + 15
    assert.deepEqual(
      (await ledger.releaseExpired()).map((e) => e.id),
      ['r1'],
    )
    assert.deepEqual(
      (await new Repo<LedgerEntry>(db, 'ledger').values()).map((e) => e.id),
      ['r2'],
    )
  })

  it('refuses to lower the offer below what is committed, saying what is committed', async () => {
    await ledger.setOffer(offerOf(res(4, 8, 10)))
    await ledger.reserve('r1', 'j1', res(1, 1), T0 + 1000)
    await lockDirect(ledger, 'd1', 'j2', res(1, 2))
    await lockDirect(ledger, 'a1', 'j3', res(1, 1))
    await ledger.allocate('a1')

    const err = await rejection(ledger.setOffer(offerOf(res(4, 3, 10))))
    assert.ok(err instanceof OfferBelowCommittedError)
    assert.equal(err.name, 'OfferBelowCommittedError')
    assert.equal(err.code, 'OFFER_BELOW_COMMITTED')
    assert.equal(
      err.message,
      'cannot lower the offer below what is committed: memory offered 3 GiB but 4 GiB is committed ' +
        '(reserved 1 GiB, locked 2 GiB, allocated 1 GiB); ' +
        'release reservations or wait for running jobs to finish, then try again',
    )
    assert.deepEqual(err.shortfall, res(0, 1))
    assert.deepEqual(ledger.getOffer()!.resources, res(4, 8, 10), 'the offer is unchanged')

    await ledger.setOffer(offerOf(res(3, 4, 0)))
    assert.deepEqual(ledger.free(), res(0, 0, 0), 'an offer equal to what is committed is fine')
    // Once the reservation lapses, the offer may drop by that much.
    clock.t = T0 + 1000
    await ledger.setOffer(offerOf(res(2, 3, 0)))
    assert.deepEqual(ledger.summary().reserved, ZERO)
  })

  it('serializes concurrent requests: exactly as many fit as the offer holds', async () => {
    await ledger.setOffer(offerOf(res(4, 64)))
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) => ledger.reserve(`r${i}`, 'j', res(1, 1), T0 + 1000)),
    )
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 4)
    for (const r of results) {
      if (r.status === 'rejected') assert.ok(r.reason instanceof InsufficientResourcesError)
    }
    assert.deepEqual(ledger.free(), res(0, 60))
  })

  it('changes nothing in memory when the write fails', async () => {
    await ledger.setOffer(offerOf(res(4, 8)))
    await ledger.reserve('r1', 'j1', res(1, 1), T0 + 1000)
    const before = ledger.summary()
    await db.close()
    await rejection(ledger.reserve('r2', 'j1', res(1, 1), T0 + 1000))
    await rejection(ledger.lock('r1'))
    await rejection(ledger.release('r1'))
    await rejection(ledger.setOffer(offerOf(res(8, 8))))
    assert.deepEqual(ledger.summary(), before)
    assert.deepEqual(
      ledger.entries().map((e) => [e.id, e.state]),
      [['r1', 'reserved']],
    )
  })

  it('is idempotent to start and stop, and refuses writes when stopped', async () => {
    await ledger.start()
    await ledger.stop()
    await ledger.stop()
    const err = await rejection(ledger.setOffer(offerOf(res(1, 1))))
    assert.ok(err instanceof LedgerNotStartedError)
    await ledger.start()
    await ledger.setOffer(offerOf(res(1, 1)))
  })

  it('hands out copies: changing a returned entry does not change the ledger', async () => {
    await ledger.setOffer(offerOf(res(4, 8)))
    const e = await ledger.reserve('r1', 'j1', res(1, 1), T0 + 1000)
    e.resources.cpu = 100
    ledger.entries()[0].resources.memoryBytes = 0
    ledger.getOffer()!.resources.cpu = 0
    assert.deepEqual(ledger.free(), res(3, 7))
  })

  it('keeps the allocation id on an allocated entry across a restart; an entry stored without one loads', async () => {
    await ledger.setOffer(offerOf(res(8, 16, 100, 2)))
    await lockDirect(ledger, 'bid-1', 'j1', res(1, 1))
    assert.equal((await ledger.allocate('bid-1', 'alloc-1')).allocationId, 'alloc-1')
    await ledger.stop()
    // As today's main stored an allocated entry: no allocationId.
    const old: LedgerEntry = {
      id: 'bid-0',
      jobId: 'j0',
      resources: res(1, 1),
      state: 'allocated',
      createdAt: T0,
    }
    await new Repo<LedgerEntry>(db, 'ledger').put('bid-0', old)
    ledger = await newLedger()
    assert.deepEqual(
      ledger.entries().map((e) => [e.id, e.state, e.allocationId]),
      [
        ['bid-0', 'allocated', undefined],
        ['bid-1', 'allocated', 'alloc-1'],
      ],
    )
  })

  it('survives a restart: locks and allocations stay, reservations that expired meanwhile are gone', async () => {
    await ledger.setOffer(offerOf(res(8, 16, 100, 2)))
    const step = async (fn: () => Promise<unknown>) => {
      await fn()
      clock.t += 1
    }
    await step(() => ledger.reserve('short', 'j1', res(1, 1), T0 + 1_000))
    await step(() => ledger.reserve('long', 'j2', res(1, 2), T0 + 60_000))
    await step(() => ledger.reserve('locked', 'j3', res(2, 2), T0 + 1_000))
    await step(() => ledger.lock('locked', { expiresAt: T0 + 2_000 }))
    await step(() => lockDirect(ledger, 'direct', 'j4', res(1, 1, 10, 1)))
    await step(() => lockDirect(ledger, 'running', 'j5', res(1, 4, 20)))
    await step(() => ledger.allocate('running'))

    await ledger.stop()
    await db.close()
    clock.t = T0 + 30_000
    db = await openDb(dir)
    ledger = await newLedger()

    assert.deepEqual(ledger.getOffer(), offerOf(res(8, 16, 100, 2)))
    assert.deepEqual(
      ledger.entries().map((e) => [e.id, e.state]),
      [
        ['long', 'reserved'],
        ['locked', 'locked'],
        ['direct', 'locked'],
        ['running', 'allocated'],
      ],
    )
    assert.deepEqual(ledger.summary(), {
      offer: res(8, 16, 100, 2),
      reserved: res(1, 2),
      locked: res(3, 3, 10, 1),
      allocated: res(1, 4, 20),
      free: res(3, 7, 70, 1),
    })
    // The lapsed reservation is gone from disk too, not just hidden.
    const stored = (await new Repo<LedgerEntry>(db, 'ledger').values()).map((e) => e.id).sort()
    assert.deepEqual(stored, ['direct', 'locked', 'long', 'running'])
    // A lock past its caller-given deadline is kept, and reported.
    assert.deepEqual(
      ledger.overdueLocks().map((e) => e.id),
      ['locked'],
    )
    // And the restored ledger keeps enforcing the offer.
    const err = await rejection(ledger.reserve('big', 'j6', res(4, 1), T0 + 60_000))
    assert.equal(err.message, 'not enough CPU: need 4 cores, free 3 cores')
  })

  it('never over-commits under 2000 concurrent random operations (seeded)', async function () {
    this.timeout(60_000)
    // Fixed seed: the run is the same every time. Another seed: DMS_SEED=<n> npx mocha <this file>.
    const seed = Number(process.env.DMS_SEED ?? 20240607)
    try {
      await randomRun(seed)
    } catch (err) {
      if (err instanceof Error) err.message = `[seed ${seed}, rerun with DMS_SEED=${seed}] ${err.message}`
      throw err
    }
  })

  async function randomRun(seed: number): Promise<void> {
    const rand = prng(seed)
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]
    const randomResources = (): Resources => ({
      cpu: pick([0.25, 0.5, 1, 1.5, 2]),
      memoryBytes: pick([256, 512, 1024, 2048]) * MiB,
      diskBytes: pick([0, 1, 5]) * GiB,
      gpus: rand() < 0.2 ? 1 : 0,
    })
    const randomOffer = (): Resources => ({
      cpu: pick([2, 4, 6]),
      memoryBytes: pick([4, 8, 12]) * GiB,
      diskBytes: pick([10, 20, 50]) * GiB,
      gpus: pick([0, 1, 2]),
    })
    const ids = Array.from({ length: 60 }, (_, i) => `e${i}`)
    const expected = new Set([
      'InsufficientResourcesError',
      'EntryExistsError',
      'EntryNotFoundError',
      'InvalidTransitionError',
      'ReservationExpiredError',
      'OfferBelowCommittedError',
      'OfferWithdrawnError',
    ])
    // A ledger whose log is read, to see reservations lapse during the run.
    let lapsed = 0
    const log = pino(
      { level: 'info' },
      {
        write(line: string) {
          const o = JSON.parse(line) as { msg: string; released?: string[] }
          if (o.msg === 'released expired reservations') lapsed += o.released!.length
        },
      },
    )
    await ledger.stop()
    ledger = new ResourceLedger({ db, clock, log })
    await ledger.start()
    await ledger.setOffer(offerOf(res(4, 8, 20, 1)))

    const violations: string[] = []
    const outcomes = new Map<string, number>()
    const count = (k: string) => outcomes.set(k, (outcomes.get(k) ?? 0) + 1)
    const check = (after: string) => {
      const s = ledger.summary()
      const committed = add(add(s.reserved, s.locked), s.allocated)
      if (!fits(committed, s.offer)) {
        violations.push(
          `after ${after}: committed ${JSON.stringify(committed)} > offer ${JSON.stringify(s.offer)}`,
        )
      }
      const listed = sum(ledger.entries().map((e) => e.resources))
      if (JSON.stringify(listed) !== JSON.stringify(committed)) {
        violations.push(
          `after ${after}: entries ${JSON.stringify(listed)} != summary ${JSON.stringify(committed)}`,
        )
      }
    }

    const ops: Promise<void>[] = []
    for (let i = 0; i < 2000; i++) {
      const r = rand()
      const id = pick(ids)
      let kind: string
      let p: Promise<unknown>
      if (r < 0.35) {
        kind = 'reserve'
        // The clock advances by 1 per settled operation, so operation i runs at about T0 + i.
        p = ledger.reserve(id, `job-${i}`, randomResources(), T0 + i + 1 + Math.floor(rand() * 60))
      } else if (r < 0.55) {
        kind = 'lock'
        p = ledger.lock(id, rand() < 0.5 ? { expiresAt: T0 + i + 100 } : {})
      } else if (r < 0.65) {
        kind = 'lockDirect'
        p = lockDirect(ledger, id, `job-${i}`, randomResources())
      } else if (r < 0.8) {
        kind = 'allocate'
        p = ledger.allocate(id)
      } else if (r < 0.96) {
        kind = 'release'
        p = ledger.release(id)
      } else if (r < 0.985) {
        kind = 'setOffer'
        p = ledger.setOffer(offerOf(randomOffer()))
      } else {
        kind = 'withdrawOffer'
        p = ledger.withdrawOffer()
      }
      ops.push(
        p
          .then(
            () => {
              count(`${kind} ok`)
            },
            (err: unknown) => {
              const name = err instanceof Error ? err.name : String(err)
              count(`${kind} ${name}`)
              if (!expected.has(name)) violations.push(`${kind} ${id} failed unexpectedly: ${String(err)}`)
            },
          )
          .then(() => {
            clock.t += 1
            check(`${kind} ${id} (#${i})`)
          }),
      )
    }
    await Promise.all(ops)

    assert.deepEqual(violations, [])
    // The run exercised every path, including refusals and lapsed reservations.
    for (const k of [
      'reserve ok',
      'reserve InsufficientResourcesError',
      'reserve EntryExistsError',
      'lock ok',
      'lock EntryNotFoundError',
      'lockDirect ok',
      'allocate ok',
      'allocate InvalidTransitionError',
      'release ok',
      'setOffer ok',
      'setOffer OfferBelowCommittedError',
      'withdrawOffer ok',
      'reserve OfferWithdrawnError',
    ]) {
      assert.ok((outcomes.get(k) ?? 0) > 0, `no "${k}" in ${JSON.stringify([...outcomes])}`)
    }

    assert.ok(lapsed > 0, 'some reservations lapsed during the run')

    // What is on disk is what is in memory.
    const reread = await newLedger()
    assert.deepEqual(reread.entries(), ledger.entries())
    assert.deepEqual(reread.summary(), ledger.summary())

    // Nothing leaks: once everything is released, nothing is committed and all of the offer is free.
    for (const e of ledger.entries()) assert.equal(await ledger.release(e.id), true)
    assert.deepEqual(ledger.entries(), [])
    const s = ledger.summary()
    assert.deepEqual([s.reserved, s.locked, s.allocated], [ZERO, ZERO, ZERO])
    const { withdrawnAt: _withdrawn, ...onboarded } = ledger.getOffer()!
    await ledger.setOffer(onboarded)
    assert.deepEqual(ledger.free(), ledger.getOffer()!.resources)
  }
})
