import assert from 'node:assert/strict'
import type { BidRequest, Invocation } from '../../../dms/protocol/messages.js'
import { checkBidRequest, invocationProblem } from '../../../dms/provider/validate.js'
import { plainNeeds } from '../../helpers/needs.js'

const MiB = 1024 * 1024
const needs = (image = 'dms-test:1', cpu = 0.5) => plainNeeds(image, { cpu, memoryBytes: 64 * MiB })
const request = (over: Partial<BidRequest> = {}): BidRequest => ({
  jobId: 'j1',
  workloadNeeds: needs(),
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
    assert.match(
      checkBidRequest(request({ workloadNeeds: needs('dms-test:1', 1e-10) })) ?? '',
      /^workloadNeeds\.members\.0\.resources\.cpu /,
    )
    assert.equal(checkBidRequest(request({ workloadNeeds: needs('dms-test:1', 0.01) })), undefined)
    assert.match(
      checkBidRequest(request({ workloadNeeds: needs('x'.repeat(513)) })) ?? '',
      /^workloadNeeds\.members\.0\.artifact/,
    )
    // The grammar is the provider's next check (ImageCheck.refusal), which answers with a decline.
    assert.equal(checkBidRequest(request({ workloadNeeds: needs('a//b') })), undefined)
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
