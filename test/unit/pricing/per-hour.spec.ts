import assert from 'node:assert/strict'
import { escrowFor, hourlyRate, quote } from '../../../dms/pricing/price.js'
import { perHour } from '../../../dms/pricing/terms.js'
import type { Prices } from '../../../dms/resources/types.js'

const GiB = 1024 ** 3
const MiB = 1024 ** 2

const prices = (over: Partial<Prices> = {}): Prices => ({
  perCpuHour: 100,
  perGiBMemoryHour: 10,
  perGiBDiskHour: 1,
  perGpuHour: 1000,
  minJobPrice: 5,
  ...over,
})

// Today's price (per hour at the provider's onboarded per-resource rates), as dms 0.1 computed it.
const pricePerHour = hourlyRate
const totalFor = (rate: number, seconds: number, p: Prices) =>
  escrowFor(perHour(rate, p.minJobPrice), { durationSeconds: seconds })

describe('pricing: per hour', () => {
  it('quotes per-hour terms at the hourly rate of the resources, with the minimum job price', () => {
    const r = { cpu: 2, memoryBytes: 4 * GiB, diskBytes: 10 * GiB, gpus: 1 }
    assert.deepEqual(quote(prices(), r), perHour(2 * 100 + 4 * 10 + 10 * 1 + 1000, 5))
  })

  describe('hourlyRate', () => {
    it('sums cpu, memory GiB, disk GiB and gpus at their prices', () => {
      const r = { cpu: 2, memoryBytes: 4 * GiB, diskBytes: 10 * GiB, gpus: 1 }
      assert.equal(pricePerHour(r, prices()), 2 * 100 + 4 * 10 + 10 * 1 + 1000)
    })

    it('rounds a fractional price up to the next whole unit', () => {
      // 0.5 * 101 + 0.5 GiB * 10 = 50.5 + 5 = 55.5 -> 56
      assert.equal(
        pricePerHour(
          { cpu: 0.5, memoryBytes: 512 * MiB, diskBytes: 0, gpus: 0 },
          prices({ perCpuHour: 101 }),
        ),
        56,
      )
      // a single byte of memory still costs a unit
      assert.equal(pricePerHour({ cpu: 0, memoryBytes: 1, diskBytes: 0, gpus: 0 }, prices()), 1)
    })

    it('is an integer that is never below the exact price', () => {
      for (const cpu of [0.1, 0.25, 1 / 3, 0.7, 1.9]) {
        const r = { cpu, memoryBytes: 300 * MiB, diskBytes: 7 * MiB, gpus: 0 }
        const exact = cpu * 100 + (300 / 1024) * 10 + (7 / 1024) * 1
        const p = pricePerHour(r, prices())
        assert.ok(Number.isInteger(p))
        assert.ok(p >= exact && p < exact + 1, `cpu ${cpu}: ${p} vs ${exact}`)
      }
    })

    it('is 0 for nothing, and for free prices', () => {
      assert.equal(pricePerHour({ cpu: 0, memoryBytes: 0, diskBytes: 0, gpus: 0 }, prices()), 0)
      const free = prices({ perCpuHour: 0, perGiBMemoryHour: 0, perGiBDiskHour: 0, perGpuHour: 0 })
      assert.equal(pricePerHour({ cpu: 4, memoryBytes: GiB, diskBytes: GiB, gpus: 1 }, free), 0)
    })
  })

  describe('escrowFor', () => {
    it('is the hourly price times the duration in hours', () => {
      assert.equal(totalFor(100, 7200, prices()), 200)
      assert.equal(totalFor(100, 1800, prices()), 50)
    })

    it('rounds a partial unit up', () => {
      assert.equal(totalFor(100, 90, prices({ minJobPrice: 0 })), 3) // 2.5 -> 3
      assert.equal(totalFor(7, 1, prices({ minJobPrice: 0 })), 1)
    })

    it('is never below minJobPrice', () => {
      assert.equal(totalFor(56, 60, prices({ minJobPrice: 5 })), 5) // 0.93 -> 1, floored up to 5
      assert.equal(totalFor(0, 3600, prices({ minJobPrice: 5 })), 5)
      assert.equal(
        totalFor(100, 3600, prices({ minJobPrice: 5 })),
        100,
        'the floor does not raise a larger total',
      )
      assert.equal(totalFor(0, 3600, prices({ minJobPrice: 0 })), 0, 'volunteer')
    })
  })
})
