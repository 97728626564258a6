/**
 * The requester's funds proof on a manual clock: held and reused while young, renewed in the
 * background past half its life, renewed BEFORE it is sent in its last quarter (a proof sent with
 * a second left reaches loaded providers expired), and kept while a renewal fails and it lasts.
 */
import assert from 'node:assert/strict'
import pino from 'pino'
import { ManualClock } from '../../../actors/clock.js'
import type { Actor } from '../../../actors/system.js'
import {
  FundsClient,
  NoFundsProofError,
  RENEW_BEFORE_USE,
} from '../../../dms/contract-clients/funds-client.js'

const TTL = 60_000
/** Lets the asks in flight settle (their promise chains). */
const settled = () => new Promise((r) => setImmediate(r))
const T0 = 1_800_000_000_000

function harness() {
  const clock = new ManualClock(T0)
  const asks: number[] = []
  let failing = false
  const client = new FundsClient(
    {
      system: { spawn: () => ({ stop: () => undefined }) as unknown as Actor, peerId: '12D3KooWRequester' },
      clock,
      log: pino({ level: 'silent' }),
      askFunds: () => {
        asks.push(clock.now())
        if (failing) return Promise.reject(new Error('contract-db silent'))
        const now = clock.now()
        return Promise.resolve({
          peer: '12D3KooWRequester',
          contractDb: '12D3KooWContractDb',
          available: 1000,
          issuedAt: now,
          expiresAt: now + TTL,
          signature: `sig-${now}`,
        })
      },
    },
    { contractDb: { peer: '12D3KooWContractDb', addrs: [] } },
  )
  return { clock, asks, client, fail: (f: boolean) => (failing = f) }
}

describe('dms/contract-clients/funds-client (the requester keeps its funds proof)', () => {
  it('reuses a young proof, renews in the background past half its life', async () => {
    const h = harness()
    h.client.start()
    await settled()
    const first = await h.client.proofFor(10)
    assert.equal(first.issuedAt, T0)
    h.clock.advance(TTL / 4)
    assert.equal((await h.client.proofFor(10)).issuedAt, T0, 'young: no ask')
    assert.deepEqual(h.asks, [T0])
    h.clock.advance(TTL / 3) // past half, not yet in the last quarter
    assert.equal((await h.client.proofFor(10)).issuedAt, T0, 'still sent: enough life left')
    await settled()
    assert.equal(h.asks.length, 2, 'renewed in the background')
  })

  it('in its last quarter a proof is renewed before it is sent', async () => {
    const h = harness()
    h.client.start()
    await settled()
    // Nothing used it meanwhile (an idle requester): the next job finds it nearly expired.
    h.clock.advance(TTL * (1 - RENEW_BEFORE_USE) + 1000)
    const sent = await h.client.proofFor(10)
    assert.equal(sent.issuedAt, h.clock.now(), 'a fresh proof, not one with seconds left')
    assert.ok(sent.expiresAt - h.clock.now() === TTL)
  })

  it('a failed renewal sends the old proof while it lasts, then fails NO_FUNDS_PROOF', async () => {
    const h = harness()
    h.client.start()
    await settled()
    h.fail(true)
    h.clock.advance(TTL * (1 - RENEW_BEFORE_USE) + 1000)
    assert.equal((await h.client.proofFor(10)).issuedAt, T0, 'the old one, still valid')
    h.clock.advance(TTL)
    await assert.rejects(h.client.proofFor(10), NoFundsProofError)
  })

  it('asks made at the same time share one ask', async () => {
    const h = harness()
    h.client.start()
    h.clock.advance(1) // the start's ask is in flight
    await Promise.all([h.client.proofFor(10), h.client.proofFor(10), h.client.proofFor(10)])
    assert.equal(h.asks.length, 1)
  })
})
