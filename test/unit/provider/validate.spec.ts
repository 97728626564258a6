import assert from 'node:assert/strict'
import type { BidRequest, Invocation } from '../../../dms/protocol/messages.js'
import { checkBidRequest, invocationProblem } from '../../../dms/provider/validate.js'

const MiB = 1024 * 1024
const request = (over: Partial<BidRequest> = {}): BidRequest => ({
  jobId: 'j1',
  resources: { cpu: 0.5, memoryBytes: 64 * MiB, diskBytes: 0, gpus: 0 },
  image: 'dms-test:1',
  maxDurationSeconds: 60,
  maxPrice: 1000,
  deadline: 1,
  exclude: [],
  ...over,
})
const invocation = (over: Partial<Invocation> = {}): Invocation => ({ inputs: [], ...over }) as Invocation

describe('provider/validate', () => {
  it('takes a bid request below the executor CPU floor as malformed, and bounds the image', () => {
    assert.equal(checkBidRequest(request()), undefined)
    assert.equal(checkBidRequest(request({ resources: { ...request().resources, cpu: 1e-10 } })), 'resources')
    assert.equal(checkBidRequest(request({ resources: { ...request().resources, cpu: 0.01 } })), undefined)
    assert.equal(checkBidRequest(request({ image: 'x'.repeat(513) })), 'image')
    // The grammar is the provider's next check (ImageCheck.refusal), which answers with a decline.
    assert.equal(checkBidRequest(request({ image: 'a//b' })), undefined)
  })

  it('refuses an invocation the executor could not run, before anything is allocated', () => {
    assert.equal(invocationProblem(invocation(), 0), undefined)
    const blob = { path: 'a', sha256: 'ab'.repeat(32), size: 10 }
    assert.equal(invocationProblem(invocation({ inputs: [blob] }), 10), undefined)
    assert.match(invocationProblem(invocation({ inputs: [blob] }), 9) ?? '', /more than the job's 9 bytes/)
    assert.match(
      invocationProblem(invocation({ inputs: [{ ...blob, sha256: 'x' }] }), 0) ?? '',
      /inputs\[0\] needs a sha256/,
    )
  })
})
