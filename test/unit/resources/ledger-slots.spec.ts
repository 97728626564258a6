import assert from 'node:assert/strict'
import { InsufficientResourcesError, InvalidEntryError } from '../../../dms/resources/errors.js'
import type { LedgerEntry, ResourceLedger } from '../../../dms/resources/ledger.js'
import { instantsOfInterest, planAt } from '../../../dms/resources/ledger-slots.js'
import { fits, sum } from '../../../dms/resources/math.js'
import type { Resources } from '../../../dms/resources/types.js'
import { Repo, type Db } from '../../../dms/store/db.js'
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

const S = 1000
const MIN = 60 * S

function cpu(n: number): Resources {
  return { cpu: n, memoryBytes: 0, diskBytes: 0, gpus: 0 }
}

describe('resources/ledger slots (bids for a later start)', () => {
  let dir: string
  let db: Db
  let clock: FakeClock
  let ledger: ResourceLedger

  beforeEach(async () => {
    ;({ dir, db, clock, ledger } = await openLedger('dms-slots-'))
  })

  afterEach(() => closeLedger({ dir, db, ledger }))

  /** A running allocation of `n` cores until `until`. */
  async function running(id: string, n: number, until: number): Promise<void> {
    await lockDirect(ledger, id, `job-${id}`, cpu(n), { until })
    await ledger.allocate(id)
  }

  it('finds the earliest slot after a running allocation, holds it, and keeps it from others', async () => {
    await ledger.setOffer(offerOf(cpu(2)))
    await running('a', 1, T0 + MIN)
    // 2 cores do not fit now; they do when `a` ends.
    assert.equal(ledger.slotFor(cpu(2), 30 * S, 10 * MIN), T0 + MIN)
    assert.equal(ledger.slotFor(cpu(2), 30 * S, 30 * S), undefined, 'not within maxAhead')
    assert.equal(ledger.slotFor(cpu(1), 30 * S, 10 * MIN), T0, 'what fits now starts now')
    const err = await rejection(ledger.reserve('b', 'jb', cpu(2), T0 + 5 * S))
    assert.ok(err instanceof InsufficientResourcesError)

    const b = await ledger.reserve('b', 'jb', cpu(2), T0 + 5 * S, { start: T0 + MIN, until: T0 + 2 * MIN })
    assert.equal(b.start, T0 + MIN)
    assert.equal(b.until, T0 + 2 * MIN)
    await ledger.lock('b')

    // One core is free now, but only until b's slot: a run past it is refused, one before it fits.
    const late = await rejection(ledger.reserve('c', 'jc', cpu(1), T0 + 5 * S, { until: T0 + 70 * S }))
    assert.ok(late instanceof InsufficientResourcesError)
    assert.match(late.message, /not enough CPU: need 1 core, free 0 cores/)
    const open = await rejection(ledger.reserve('c', 'jc', cpu(1), T0 + 5 * S))
    assert.ok(open instanceof InsufficientResourcesError, 'a run without a deadline overlaps every slot')
    await lockDirect(ledger, 'c', 'jc', cpu(1), { until: T0 + 50 * S })
    await ledger.allocate('c')

    // b may not start while a and c run; an early start is refused; then a and c end early.
    assert.equal(ledger.canStart('b'), false)
    assert.ok((await rejection(ledger.allocate('b'))) instanceof InsufficientResourcesError)
    await ledger.release('a')
    assert.equal(ledger.canStart('b'), false, 'c still holds a core')
    await ledger.release('c')
    assert.equal(ledger.canStart('b'), true)
    clock.t += 10 * S
    const started = await ledger.allocate('b')
    assert.equal(started.state, 'allocated')
    assert.equal(started.start, T0 + 10 * S, 'started early: its slot moves to now')
    assert.equal(ledger.canStart('nothing'), false)
  })

  it('an allocation overrunning its deadline keeps the next slot waiting until it is released', async () => {
    await ledger.setOffer(offerOf(cpu(1)))
    await running('a', 1, T0 + MIN)
    await lockDirect(ledger, 'b', 'jb', cpu(1), { start: T0 + MIN, until: T0 + 2 * MIN })
    clock.t = T0 + 70 * S
    // At the present instant `a` still counts (unreleased); at future instants it no longer does.
    assert.equal(ledger.canStart('b'), false)
    assert.ok((await rejection(ledger.allocate('b'))) instanceof InsufficientResourcesError)
    await ledger.release('a')
    assert.equal(ledger.canStart('b'), true)
    assert.equal((await ledger.allocate('b')).start, T0 + MIN, 'a slot already due keeps its start')
    // The offer may not drop below what runs.
    assert.ok((await rejection(ledger.setOffer(offerOf(cpu(0.5))))).name === 'OfferBelowCommittedError')
  })

  it('refuses a slot whose until is not after its start', async () => {
    await ledger.setOffer(offerOf(cpu(1)))
    const err = await rejection(
      ledger.reserve('b', 'jb', cpu(1), T0 + S, { start: T0 + MIN, until: T0 + MIN }),
    )
    assert.ok(err instanceof InvalidEntryError)
    assert.match(err.message, /until must be after the start/)
  })

  it('loads entries stored before slots: they count at every instant until released', async () => {
    await ledger.setOffer(offerOf(cpu(1)))
    await ledger.stop()
    const old: LedgerEntry = {
      id: 'old',
      jobId: 'j',
      resources: cpu(1),
      state: 'allocated',
      createdAt: T0 - MIN,
    }
    await new Repo<LedgerEntry>(db, 'ledger').put('old', old)
    await ledger.start()
    assert.deepEqual(ledger.entries(), [old])
    assert.equal(ledger.slotFor(cpu(1), S, 10 * MIN), undefined, 'no end known: no slot after it')
    await ledger.release('old')
    assert.equal(ledger.slotFor(cpu(1), S, 10 * MIN), T0)
  })

  it('never plans beyond the offer nor allocates beyond it, over random slots, releases and time (seeded)', async function () {
    this.timeout(60_000)
    const seed = Number(process.env.DMS_SEED ?? 20261122)
    const rand = prng(seed)
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]
    const offer = cpu(4)
    await ledger.setOffer(offerOf(offer))
    const ids = Array.from({ length: 30 }, (_, i) => `e${i}`)
    const outcomes = new Map<string, number>()
    const count = (k: string) => outcomes.set(k, (outcomes.get(k) ?? 0) + 1)
    const violations: string[] = []

    for (let i = 0; i < 3000; i++) {
      const r = rand()
      const id = pick(ids)
      const now = clock.now()
      const need = cpu(pick([0.5, 1, 2, 3]))
      const duration = pick([5, 20, 60, 120]) * S
      let kind: string
      let p: Promise<unknown>
      if (r < 0.3) {
        // Reserve where the ledger says it fits (sometimes later), or at a random start.
        const start =
          rand() < 0.7 ? ledger.slotFor(need, duration, 5 * MIN) : now + Math.floor(rand() * 3 * MIN)
        kind = start === undefined || start === now ? 'reserve now' : 'reserve later'
        const slot = start === undefined ? { until: now + duration } : { start, until: start + duration }
        p = ledger.reserve(id, `job-${i}`, need, now + pick([1, 10, 30]) * S, slot)
      } else if (r < 0.45) {
        kind = 'lock'
        p = ledger.lock(id)
      } else if (r < 0.6) {
        kind = 'allocate'
        const predicted = ledger.canStart(id)
        p = ledger.allocate(id).then(
          (e) => {
            if (!predicted) violations.push(`#${i}: allocated ${id} although canStart was false`)
            return e
          },
          (err: unknown) => {
            const e = ledger.entries().find((x) => x.id === id)
            if (predicted && e?.state === 'locked')
              violations.push(`#${i}: canStart ${id} but: ${String(err)}`)
            throw err
          },
        )
      } else if (r < 0.8) {
        kind = 'release'
        p = ledger.release(id)
      } else if (r < 0.83) {
        kind = 'lockDirect open'
        p = lockDirect(ledger, id, `job-${i}`, need)
      } else {
        kind = 'advance'
        clock.t += pick([1, 5, 15, 45]) * S
        p = ledger.releaseExpired()
      }
      try {
        await p
        count(`${kind} ok`)
      } catch (err) {
        count(`${kind} ${err instanceof Error ? err.name : String(err)}`)
      }

      const t = clock.now()
      const live = ledger.entries()
      const allocated = sum(live.filter((e) => e.state === 'allocated').map((e) => e.resources))
      if (!fits(allocated, offer)) violations.push(`#${i} ${kind}: allocated ${allocated.cpu} > offer`)
      for (const at of instantsOfInterest(live, t + 1, Infinity)) {
        const plan = planAt(live, at, t)
        if (!fits(plan, offer)) violations.push(`#${i} ${kind}: plan ${plan.cpu} cores at +${at - t} ms`)
      }
      if (violations.length > 5) break
    }
    assert.deepEqual(violations, [], `seed ${seed}`)
    for (const k of [
      'reserve now ok',
      'reserve later ok',
      'reserve later InsufficientResourcesError',
      'allocate ok',
      'allocate InsufficientResourcesError',
      'lock ok',
      'release ok',
      'advance ok',
    ]) {
      assert.ok((outcomes.get(k) ?? 0) > 0, `no "${k}" in ${JSON.stringify([...outcomes])}`)
    }
  })
})
