/**
 * GPUs held by index (specs/resources.md, "GPUs by index"): each entry with GPUs holds that many
 * of the offer's GPUs, named, never one another entry holds, kept through lock, allocate and a
 * restart, freed by release; a job's eligible GPUs (its model) narrow the pick.
 */
import assert from 'node:assert/strict'
import { silentLogger } from '../../../dms/log.js'
import { GpusTakenError, InsufficientResourcesError } from '../../../dms/resources/errors.js'
import { ResourceLedger } from '../../../dms/resources/ledger.js'
import type { Resources } from '../../../dms/resources/types.js'
import { closeLedger, offerOf, openLedger, rejection, T0, type LedgerFixture } from '../../helpers/ledger.js'

const GiB = 1024 ** 3
const gpus = (n: number): Resources => ({ cpu: 0.1, memoryBytes: GiB / 8, diskBytes: 0, gpus: n })
const LATER = T0 + 60_000

describe('resources/ResourceLedger: GPUs by index', () => {
  let f: LedgerFixture
  beforeEach(async () => {
    f = await openLedger('dms-ledger-gpus-')
    await f.ledger.setOffer({
      ...offerOf({ cpu: 4, memoryBytes: 4 * GiB, diskBytes: 0, gpus: 3 }),
      gpuIndices: [5, 0, 2],
    })
  })
  afterEach(() => closeLedger(f))

  it('gives each entry the lowest free offered GPUs, never one another entry holds', async () => {
    const a = await f.ledger.reserve('a', 'j-a', gpus(2), LATER)
    const b = await f.ledger.reserve('b', 'j-b', gpus(1), LATER)
    assert.deepEqual(a.gpuIndices, [0, 2])
    assert.deepEqual(b.gpuIndices, [5])
    assert.deepEqual(f.ledger.heldGpus(), [0, 2, 5])
    const none = await f.ledger.reserve('c', 'j-c', gpus(0), LATER)
    assert.equal(none.gpuIndices, undefined, 'an entry without GPUs names none')
    await f.ledger.release('a')
    assert.deepEqual((await f.ledger.reserve('d', 'j-d', gpus(1), LATER)).gpuIndices, [0])
  })

  it('keeps the GPUs through lock, allocate and a restart', async () => {
    await f.ledger.reserve('a', 'j-a', gpus(1), LATER, {}, { eligible: [2, 5] })
    assert.deepEqual((await f.ledger.lock('a')).gpuIndices, [2])
    assert.deepEqual((await f.ledger.allocate('a', 'alloc-a')).gpuIndices, [2])
    await f.ledger.stop()
    f.ledger = new ResourceLedger({ db: f.db, clock: f.clock, log: silentLogger })
    await f.ledger.start()
    assert.deepEqual(f.ledger.entries()[0].gpuIndices, [2])
    assert.deepEqual((await f.ledger.reserve('b', 'j-b', gpus(2), LATER)).gpuIndices, [0, 5])
  })

  it('picks only among the eligible GPUs (the model asked), and says so when they are taken', async () => {
    await f.ledger.reserve('a', 'j-a', gpus(1), LATER, {}, { eligible: [5] })
    // One GPU of three is held: counts fit, but the only eligible one is taken.
    const err = await rejection(f.ledger.reserve('b', 'j-b', gpus(1), LATER, {}, { eligible: [5] }))
    assert.ok(err instanceof GpusTakenError)
    assert.equal(err.code, 'GPUS_TAKEN')
    assert.equal(err.message, 'not enough gpus: need 1 that fit the job, free 0')
    assert.deepEqual(
      f.ledger.entries().map((e) => e.id),
      ['a'],
      'nothing reserved',
    )
  })

  it('refuses more GPUs than are free by count, as any resource', async () => {
    await f.ledger.reserve('a', 'j-a', gpus(2), LATER)
    const err = await rejection(f.ledger.reserve('b', 'j-b', gpus(2), LATER))
    assert.ok(err instanceof InsufficientResourcesError)
  })

  it('an offer from the config (a count, no indices) offers GPUs 0..n-1', async () => {
    await f.ledger.setOffer(offerOf({ cpu: 4, memoryBytes: 4 * GiB, diskBytes: 0, gpus: 2 }))
    assert.deepEqual((await f.ledger.reserve('a', 'j-a', gpus(2), LATER)).gpuIndices, [0, 1])
  })
})
