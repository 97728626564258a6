import assert from 'node:assert/strict'
import { UnitError as UnitErrorFromErrors } from '../../../dms/resources/errors.js'
import {
  UnitError,
  formatBytes,
  formatCpu,
  formatGpus,
  formatResources,
  parseBytes,
  parseCpu,
  parseWholeNumber,
} from '../../../dms/resources/units.js'

function unitError(fn: () => unknown): UnitError {
  try {
    fn()
  } catch (err) {
    assert.ok(err instanceof UnitError, `expected a UnitError, got ${String(err)}`)
    assert.equal(err.name, 'UnitError')
    assert.equal(err.code, 'INVALID_UNIT')
    return err
  }
  assert.fail('expected a UnitError')
}

describe('resources/units', () => {
  describe('parseBytes', () => {
    it('reads 1024-based units', () => {
      assert.equal(parseBytes('4GiB'), 4 * 1024 ** 3)
      assert.equal(parseBytes('512MiB'), 512 * 1024 ** 2)
      assert.equal(parseBytes('1KiB'), 1024)
      assert.equal(parseBytes('2TiB'), 2 * 1024 ** 4)
      assert.equal(parseBytes('1.5KiB'), 1536)
    })

    it('reads 1000-based units', () => {
      assert.equal(parseBytes('1.5GB'), 1_500_000_000)
      assert.equal(parseBytes('3KB'), 3000)
      assert.equal(parseBytes('7MB'), 7_000_000)
      assert.equal(parseBytes('1TB'), 1e12)
    })

    it('takes a bare number (string or number) as bytes', () => {
      assert.equal(parseBytes('1024'), 1024)
      assert.equal(parseBytes('0'), 0)
      assert.equal(parseBytes(2048), 2048)
      assert.equal(parseBytes('10B'), 10)
    })

    it('ignores case and whitespace around the unit', () => {
      assert.equal(parseBytes('4gib'), 4 * 1024 ** 3)
      assert.equal(parseBytes('4GIB'), 4 * 1024 ** 3)
      assert.equal(parseBytes(' 4 GiB '), 4 * 1024 ** 3)
      assert.equal(parseBytes('1.5gb'), 1_500_000_000)
    })

    it('rejects negatives, saying so', () => {
      const err = unitError(() => parseBytes('-1GiB'))
      assert.match(err.message, /"-1GiB"/)
      assert.match(err.message, /negative/)
      unitError(() => parseBytes(-5))
    })

    it('rejects non-numbers and NaN, listing what is accepted', () => {
      for (const bad of ['', 'abc', 'GiB', '4 Gi B', '1..2GB', 'NaN', NaN, Infinity]) {
        const err = unitError(() => parseBytes(bad))
        assert.match(err.message, /KiB, MiB, GiB, TiB/, `message for ${String(bad)}: ${err.message}`)
      }
    })

    it('rejects unknown units, naming the value and the accepted units', () => {
      const err = unitError(() => parseBytes('4XB'))
      assert.equal(err.value, '4XB')
      assert.match(err.message, /invalid size "4XB": unknown unit "XB"/)
      assert.match(
        err.message,
        /KiB, MiB, GiB, TiB \(1024-based, also written Ki, Mi, Gi, Ti or k, m, g, t\)/,
      )
      assert.match(err.message, /KB, MB, GB, TB \(1000-based\)/)
      unitError(() => parseBytes('4PiB'))
      unitError(() => parseBytes('4Gb!'))
    })

    it("reads Docker's single letters and Kubernetes' Ki/Mi/Gi/Ti as 1024-based (issue 35)", () => {
      assert.equal(parseBytes('64m'), 64 * 1024 ** 2)
      assert.equal(parseBytes('64M'), 64 * 1024 ** 2)
      assert.equal(parseBytes('1g'), 1024 ** 3)
      assert.equal(parseBytes('8k'), 8 * 1024)
      assert.equal(parseBytes('1t'), 1024 ** 4)
      assert.equal(parseBytes('64Mi'), 64 * 1024 ** 2)
      assert.equal(parseBytes('2Gi'), 2 * 1024 ** 3)
      assert.equal(parseBytes('512Ki'), 512 * 1024)
      assert.match(unitError(() => parseBytes('-64m')).message, /negative/)
      assert.match(unitError(() => parseBytes('9000000t')).message, /too large/)
      assert.match(unitError(() => parseBytes('64x')).message, /unknown unit "x".*64m/)
    })

    it('rejects fractional bytes and sizes beyond 2^53', () => {
      assert.match(unitError(() => parseBytes('1.5')).message, /whole number/)
      assert.match(unitError(() => parseBytes('9000000TiB')).message, /too large/)
    })

    it('accepts exactly what formatBytes prints', () => {
      for (const n of [0, 1, 1023, 1024, 1536, 512 * 1024 ** 2, 4 * 1024 ** 3, 3 * 1024 ** 4]) {
        assert.equal(parseBytes(formatBytes(n)), n)
      }
    })
  })

  describe('formatBytes', () => {
    it('uses the largest 1024-based unit keeping the number >= 1', () => {
      assert.equal(formatBytes(0), '0 B')
      assert.equal(formatBytes(1023), '1023 B')
      assert.equal(formatBytes(1024), '1 KiB')
      assert.equal(formatBytes(1536), '1.5 KiB')
      assert.equal(formatBytes(512 * 1024 ** 2), '512 MiB')
      assert.equal(formatBytes(4 * 1024 ** 3), '4 GiB')
      assert.equal(formatBytes(1.25 * 1024 ** 4), '1.25 TiB')
    })

    it('does not print 1024 of a unit', () => {
      assert.equal(formatBytes(1024 ** 2 - 1), '1 MiB')
    })

    it('handles negatives', () => {
      assert.equal(formatBytes(-2048), '-2 KiB')
    })
  })

  describe('parseCpu', () => {
    it('reads cores, whole or fractional', () => {
      assert.equal(parseCpu('2'), 2)
      assert.equal(parseCpu('0.5'), 0.5)
      assert.equal(parseCpu(' 1.25 '), 1.25)
      assert.equal(parseCpu(3), 3)
    })

    it('rejects zero, negatives and non-numbers with a readable message', () => {
      for (const bad of ['0', '-1', 'abc', '', '1.5x', '1e3', 'NaN', 0, -2, NaN]) {
        const err = unitError(() => parseCpu(bad))
        assert.match(err.message, /invalid CPU amount .*: expected a number of CPU cores greater than 0/)
      }
    })

    it("reads Kubernetes' millicores, whole and bounded (issue 35)", () => {
      assert.equal(parseCpu('500m'), 0.5)
      assert.equal(parseCpu('1m'), 0.001)
      assert.equal(parseCpu('2000m'), 2)
      for (const bad of ['0m', '-500m', '1.5m', '500M', 'm', '1234567890m'])
        assert.match(unitError(() => parseCpu(bad)).message, /invalid CPU amount .*millicores, e\.g\. 500m/)
    })
  })

  describe('parseWholeNumber', () => {
    it('reads decimal digits only: not hex, binary, exponents, signs or blanks', () => {
      assert.equal(parseWholeNumber('300', 'seconds'), 300)
      assert.equal(parseWholeNumber(' 0 ', 'seconds'), 0)
      assert.equal(parseWholeNumber('9007199254740991', 'micro-tokens'), 2 ** 53 - 1)
      for (const bad of ['0x10', '0b11', '0o7', '1e3', '-1', '+1', '1.5', '', ' ', '9007199254740992']) {
        const err = unitError(() => parseWholeNumber(bad, 'seconds'))
        assert.match(err.message, /^invalid number of seconds .*: expected a whole number in decimal digits/)
      }
    })
  })

  it('formats cores, GPUs and whole amounts', () => {
    assert.equal(formatCpu(1), '1 core')
    assert.equal(formatCpu(0.5), '0.5 cores')
    assert.equal(formatGpus(1), '1 GPU')
    assert.equal(formatGpus(0), '0 GPUs')
    assert.equal(
      formatResources({ cpu: 2, memoryBytes: 4 * 1024 ** 3, diskBytes: 10 * 1024 ** 3, gpus: 0 }),
      '2 cores, 4 GiB memory, 10 GiB disk, 0 GPUs',
    )
  })

  it('UnitError is also exported from errors.ts', () => {
    assert.equal(UnitErrorFromErrors, UnitError)
  })
})
