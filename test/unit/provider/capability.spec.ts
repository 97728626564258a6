import assert from 'node:assert/strict'
import {
  acceptJob,
  declineKind,
  compareCapability,
  type Comparator,
} from '../../../dms/provider/capability.js'
import type { Resources } from '../../../dms/resources/types.js'

const GiB = 1024 ** 3
const MiB = 1024 ** 2

const res = (cpu: number, memoryBytes: number, diskBytes = 0, gpus = 0): Resources => ({
  cpu,
  memoryBytes,
  diskBytes,
  gpus,
})

describe('provider/capability', () => {
  describe('compareCapability', () => {
    it('fits with margins = available - required in every dimension', () => {
      const c = compareCapability(res(1.5, 2 * GiB, 1 * GiB, 0), res(4, 8 * GiB, 10 * GiB, 1))
      assert.equal(c.fits, true)
      assert.deepEqual(c.reasons, [])
      assert.deepEqual(c.margins, { cpu: 2.5, memoryBytes: 6 * GiB, diskBytes: 9 * GiB, gpus: 1 })
    })

    it('fits exactly when required equals available', () => {
      const r = res(2, 4 * GiB, 1 * GiB, 1)
      const c = compareCapability(r, { ...r })
      assert.equal(c.fits, true)
      assert.deepEqual(c.margins, { cpu: 0, memoryBytes: 0, diskBytes: 0, gpus: 0 })
    })

    it('does not refuse on float noise (0.1 + 0.2 cores in 0.3 free)', () => {
      const c = compareCapability(res(0.1 + 0.2, 0), res(0.3, 0))
      assert.equal(c.fits, true)
      assert.deepEqual(c.reasons, [])
    })

    it('gives one human reason per missing resource, with negative margins', () => {
      const c = compareCapability(res(4, 8 * GiB, 20 * GiB, 2), res(2, 8 * GiB, 10 * GiB, 0))
      assert.equal(c.fits, false)
      assert.deepEqual(c.margins, { cpu: -2, memoryBytes: 0, diskBytes: -10 * GiB, gpus: -2 })
      assert.deepEqual(c.reasons, [
        'not enough cpu: need 4 cores, free 2 cores',
        'not enough disk: need 20 GiB, free 10 GiB',
        'not enough gpus: need 2 GPUs, free 0 GPUs',
      ])
    })

    it('names memory as memory', () => {
      const c = compareCapability(res(1, 512 * MiB), res(1, 256 * MiB))
      assert.equal(c.fits, false)
      assert.deepEqual(c.reasons, ['not enough memory: need 512 MiB, free 256 MiB'])
      assert.equal(c.margins.memoryBytes, -256 * MiB)
    })

    it('does not change its inputs', () => {
      const need = res(1, GiB)
      const have = res(2, 2 * GiB)
      compareCapability(need, have)
      assert.deepEqual(need, res(1, GiB))
      assert.deepEqual(have, res(2, 2 * GiB))
    })
  })

  describe('acceptJob', () => {
    const fits = compareCapability(res(1, GiB), res(4, 8 * GiB))
    const prefs = (over: Partial<Comparator> = {}): Comparator => ({
      hasImage: true,
      price: 100,
      maxPrice: 100,
      excluded: false,
      ...over,
    })

    it('accepts when everything is fine (price equal to the max is fine)', () => {
      assert.deepEqual(acceptJob(fits, prefs(), 'dms-test:1', 3600), { accept: true, reasons: [] })
    })

    it('carries the capability reasons', () => {
      const tooBig = compareCapability(res(8, GiB), res(4, 8 * GiB))
      const d = acceptJob(tooBig, prefs(), 'dms-test:1', 60)
      assert.equal(d.accept, false)
      assert.deepEqual(d.reasons, ['not enough cpu: need 8 cores, free 4 cores'])
    })

    it('refuses an image that matches no allowed pattern (globs)', () => {
      const allowedImages = ['docker.io/library/*', 'dms-test:*']
      assert.equal(acceptJob(fits, prefs({ allowedImages }), 'dms-test:1', 60).accept, true)
      assert.equal(acceptJob(fits, prefs({ allowedImages }), 'docker.io/library/alpine:3', 60).accept, true)
      const d = acceptJob(fits, prefs({ allowedImages }), 'evil/miner:latest', 60)
      assert.equal(d.accept, false)
      assert.deepEqual(d.reasons, ['image evil/miner:latest is not allowed here'])
    })

    it('declines a job asking for the network unless the provider allows it', () => {
      assert.deepEqual(acceptJob(fits, prefs({ network: true }), 'dms-test:1', 60), {
        accept: false,
        reasons: ['network not allowed here: the job asks for network access'],
      })
      assert.equal(
        acceptJob(fits, prefs({ network: true, allowNetwork: true }), 'dms-test:1', 60).accept,
        true,
      )
      assert.equal(acceptJob(fits, prefs({ network: false }), 'dms-test:1', 60).accept, true)
      assert.equal(
        declineKind('network not allowed here: the job asks for network access'),
        'network not allowed',
      )
    })

    it('matches the whole image name, with regexp characters taken literally', () => {
      assert.equal(acceptJob(fits, prefs({ allowedImages: ['dms-test:1'] }), 'dms-test:10', 60).accept, false)
      assert.equal(
        acceptJob(fits, prefs({ allowedImages: ['dms-test:1'] }), 'x/dms-test:1', 60).accept,
        false,
      )
      assert.equal(acceptJob(fits, prefs({ allowedImages: ['dms.test:*'] }), 'dms-test:1', 60).accept, false)
      assert.equal(acceptJob(fits, prefs({ allowedImages: ['dms.test:*'] }), 'dms.test:1', 60).accept, true)
      assert.equal(acceptJob(fits, prefs({ allowedImages: ['a+b:(1)'] }), 'a+b:(1)', 60).accept, true)
      assert.equal(acceptJob(fits, prefs({ allowedImages: [] }), 'dms-test:1', 60).accept, false)
    })

    it('refuses an allowed image this provider does not have (and does not say both)', () => {
      const d = acceptJob(fits, prefs({ hasImage: false }), 'dms-test:1', 60)
      assert.equal(d.accept, false)
      assert.deepEqual(d.reasons, ['image dms-test:1 is not available on this provider'])
      const notAllowed = acceptJob(
        fits,
        prefs({ hasImage: false, allowedImages: ['other:*'] }),
        'dms-test:1',
        60,
      )
      assert.deepEqual(notAllowed.reasons, ['image dms-test:1 is not allowed here'])
    })

    it('refuses a duration over the limit (default one day)', () => {
      assert.equal(acceptJob(fits, prefs(), 'dms-test:1', 86_400).accept, true)
      const d = acceptJob(fits, prefs(), 'dms-test:1', 86_401)
      assert.deepEqual(d.reasons, ["max duration 86401s exceeds this provider's limit 86400s"])
      const custom = acceptJob(fits, prefs({ maxDurationSeconds: 60 }), 'dms-test:1', 61)
      assert.deepEqual(custom.reasons, ["max duration 61s exceeds this provider's limit 60s"])
    })

    it('refuses a price over the max price', () => {
      const d = acceptJob(fits, prefs({ price: 101, maxPrice: 100 }), 'dms-test:1', 60)
      assert.equal(d.accept, false)
      assert.deepEqual(d.reasons, ["price 101 exceeds the job's max price 100"])
    })

    it('refuses when excluded by the requester', () => {
      const d = acceptJob(fits, prefs({ excluded: true }), 'dms-test:1', 60)
      assert.equal(d.accept, false)
      assert.deepEqual(d.reasons, ['excluded by the requester'])
    })

    it('lists every reason at once', () => {
      const tooBig = compareCapability(res(8, GiB), res(4, 8 * GiB))
      const d = acceptJob(
        tooBig,
        prefs({ excluded: true, hasImage: false, price: 500, maxDurationSeconds: 10 }),
        'img:1',
        11,
      )
      assert.equal(d.accept, false)
      assert.equal(d.reasons.length, 5)
    })

    it('applies the accept policy: minimum price, requester lists, concurrent jobs', () => {
      const why = (over: Partial<Comparator>) => acceptJob(fits, prefs(over), 'dms-test:1', 60).reasons
      assert.deepEqual(why({ minPrice: 200 }), ["below minimum price: the job's max price 100 is under 200"])
      assert.deepEqual(why({ minPrice: 100 }), [])
      assert.deepEqual(why({ requester: 'A', denyRequesters: ['A'] }), ['requester denied by this provider'])
      assert.deepEqual(why({ requester: 'A', allowRequesters: ['B'] }), [
        "requester not in this provider's allow list",
      ])
      assert.deepEqual(why({ requester: 'B', allowRequesters: ['B'], denyRequesters: ['A'] }), [])
      assert.deepEqual(why({ maxConcurrentJobs: 2, activeJobs: 2 }), ['busy: 2 of at most 2 concurrent jobs'])
      assert.deepEqual(why({ maxConcurrentJobs: 2, activeJobs: 1 }), [])
    })
  })
})
