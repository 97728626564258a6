import assert from 'node:assert/strict'
import { OOM_PEAK_SHARE, outOfMemory, type MemoryFacts } from '../../../dms/executor/common/outcome.js'

const MiB = 1024 * 1024
/** A container with a 64 MiB limit SIGKILLed by someone else, its memory seen at the limit. */
const podmanOom: MemoryFacts = {
  engineSaid: false,
  exitCode: 137,
  killedByUs: false,
  peakMemoryBytes: 64 * MiB,
  memoryLimitBytes: 64 * MiB,
}

describe('executor outcome: out of memory (outcome.ts)', function () {
  it("takes the engine's word (Docker's OOMKilled)", function () {
    assert.equal(outOfMemory({ ...podmanOom, engineSaid: true, exitCode: 1, peakMemoryBytes: 0 }), true)
  })

  it('reads exit 137 at the memory limit as out of memory when the engine says nothing (podman)', function () {
    assert.equal(outOfMemory(podmanOom), true)
    assert.equal(outOfMemory({ ...podmanOom, peakMemoryBytes: Math.ceil(OOM_PEAK_SHARE * 64 * MiB) }), true)
  })

  it('does not blame memory for our own kill, another exit code, a low peak, or no limit', function () {
    assert.equal(outOfMemory({ ...podmanOom, killedByUs: true }), false, 'our timeout or cancel')
    assert.equal(outOfMemory({ ...podmanOom, exitCode: 1 }), false)
    assert.equal(outOfMemory({ ...podmanOom, exitCode: 143 }), false, 'SIGTERM')
    assert.equal(
      outOfMemory({ ...podmanOom, peakMemoryBytes: 8 * MiB }),
      false,
      'a SIGKILL far from the limit',
    )
    assert.equal(outOfMemory({ ...podmanOom, peakMemoryBytes: 0 }), false, 'never sampled')
    assert.equal(outOfMemory({ ...podmanOom, memoryLimitBytes: 0 }), false)
  })
})
