/**
 * `dms job run`'s defaults against what a devnet provider asks (issue 20): the command the devnet
 * prints ("Try: dms job run ... -- echo hi") must find a bid, and a job that failed on price says
 * which max price would have been accepted. Its exit status follows the container's.
 */
import assert from 'node:assert/strict'
import { DEVNET_PRICES } from '../../../dms/cli/devnet.js'
import { DEFAULT_MAX_PRICE, maxPriceHint, parseDuration, waitExitCode } from '../../../dms/cli/job-run.js'
import { escrowFor, quote } from '../../../dms/pricing/price.js'

const MiB = 1024 * 1024

describe('dms job run defaults (issue 20)', () => {
  it("the default max price covers a devnet provider's ask for the default job (1 cpu, 256 MiB, 300 s)", () => {
    const price = quote(DEVNET_PRICES, { cpu: 1, memoryBytes: 256 * MiB, diskBytes: 256 * MiB, gpus: 0 })
    const ask = escrowFor(price, { durationSeconds: 300 })
    assert.ok(ask <= DEFAULT_MAX_PRICE, `devnet asks ${ask}, the default max price is ${DEFAULT_MAX_PRICE}`)
  })

  it('a price-only refusal names the lowest max price a provider would have accepted', () => {
    const hint = maxPriceHint({
      error: {
        code: 'NO_BIDS',
        message: 'no provider bid',
        declines: [
          { jobId: 'j', provider: 'a', reasons: ["price 100209 exceeds the job's max price 100000"] },
          { jobId: 'j', provider: 'b', reasons: ["price 90000 exceeds the job's max price 100000"] },
          {
            jobId: 'j',
            provider: 'c',
            reasons: ['not enough memory', "price 5 exceeds the job's max price 1"],
          },
        ],
      },
    })
    assert.match(hint ?? '', /--max-price 90000 /)
    assert.equal(maxPriceHint({ error: { code: 'NO_BIDS', message: 'x', declines: [] } }), undefined)
  })

  it("--wait exits with the container's exit code, 2 when the job never ran", () => {
    const ran = (exitCode: number) =>
      ({ receipt: { receipt: { exitCode } } }) as unknown as Parameters<typeof waitExitCode>[0]['result']
    assert.equal(waitExitCode({ state: 'completed', result: ran(0) }), 0)
    assert.equal(waitExitCode({ state: 'failed', result: ran(3) }), 3)
    assert.equal(waitExitCode({ state: 'failed', result: undefined }), 2)
    assert.equal(waitExitCode({ state: 'cancelled', result: ran(-1) }), 2)
  })

  it('--timeout reads seconds and durations like 90s, 10m, 2h, 1h30m; nothing else', () => {
    assert.deepEqual(['300', '90s', '10m', '2h', '1h30m'].map(parseDuration), [300, 90, 600, 7200, 5400])
    for (const bad of ['', '0x10', '1e3', '10 m', '-5', '1.5h', 'm'])
      assert.throws(() => parseDuration(bad), { name: 'UnitError' }, bad)
  })
})
