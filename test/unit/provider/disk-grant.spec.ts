import assert from 'node:assert/strict'
import {
  DEFAULT_DISK_BYTES,
  grantedResources,
  MIN_DISK_GRANT_BYTES,
} from '../../../dms/provider/disk-grant.js'
import { compareCapability } from '../../../dms/provider/capability.js'

const MiB = 1024 * 1024
const GiB = 1024 * MiB
const job = (diskBytes: number) => ({ cpu: 0.5, memoryBytes: 64 * MiB, diskBytes, gpus: 0 })
const free = (diskBytes: number) => ({ cpu: 1, memoryBytes: GiB, diskBytes, gpus: 0 })

describe('provider/disk-grant: the disk a job gets on /outputs', function () {
  it('keeps the disk a job asks for', function () {
    assert.deepEqual(grantedResources(job(64 * MiB), free(GiB)), job(64 * MiB))
    assert.deepEqual(grantedResources(job(64 * MiB), free(GiB), 16 * MiB), job(64 * MiB))
  })

  it('gives a job without disk the default quota (256 MiB unless configured)', function () {
    assert.equal(DEFAULT_DISK_BYTES, 256 * MiB)
    assert.deepEqual(grantedResources(job(0), free(GiB)), job(256 * MiB))
    assert.deepEqual(grantedResources(job(0), free(GiB), 16 * MiB), job(16 * MiB))
  })

  it('grants no more than the free disk, and a provider with too little declines', function () {
    assert.deepEqual(grantedResources(job(0), free(100 * MiB)), job(100 * MiB))
    const starved = grantedResources(job(0), free(MiB))
    assert.equal(starved.diskBytes, MIN_DISK_GRANT_BYTES)
    assert.deepEqual(compareCapability(starved, free(MiB)).reasons, [
      'not enough disk: need 8 MiB, free 1 MiB',
    ])
  })
})
