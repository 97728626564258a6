/**
 * A job every provider declined for room, posted without a queue timeout, fails saying how to
 * wait: a devnet's third concurrent job failed at once without a word of --queue-timeout (issue 35).
 */
import assert from 'node:assert/strict'
import type { JobRecord } from '../../../dms/orchestrator/job-record.js'
import { noBidsError } from '../../../dms/orchestrator/job-rules.js'

const job = (reasons: string[][], queueTimeoutSeconds?: number): JobRecord =>
  ({
    spec: { queueTimeoutSeconds },
    bids: [],
    declines: reasons.map((r, i) => ({ provider: `12D3KooWprovider${i}`, reasons: r })),
  }) as unknown as JobRecord

describe('the no-bids error says how to wait for room (issue 35)', () => {
  it('every decline for room, no queue timeout: names --queue-timeout and queueTimeout', () => {
    const e = noBidsError(
      job([['not enough cpu: need 1 core, free 0 cores'], ['not enough memory: need 1 GiB, free 0 B']]),
    )
    assert.equal(e.code, 'NO_BIDS')
    assert.match(e.message, /^no provider bid: .*not enough cpu.*not enough memory/)
    assert.match(e.message, /--queue-timeout 10m, or queueTimeout in the spec, to wait in `queued`/)
  })

  it('no hint when a provider declined for anything else, or the job had a queue timeout', () => {
    const price = noBidsError(
      job([['not enough cpu: need 1 core, free 0 cores'], ["price 9 exceeds the job's max price 1"]]),
    )
    assert.doesNotMatch(price.message, /queue-timeout/)
    assert.doesNotMatch(noBidsError(job([['not enough cpu: x']], 60)).message, /queue-timeout/)
    assert.doesNotMatch(noBidsError(job([[]])).message, /queue-timeout/)
  })
})
