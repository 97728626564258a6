/**
 * Half-sent frames against real nodes on 127.0.0.1 (issue 13, item 5): a peer that announces a
 * frame and never finishes it, or holds more unfinished bytes than its budget, has its stream
 * closed and counted; a stream that ends inside a frame is counted. The victim's read deadline
 * runs on a simulated clock, fired by the test once the victim has armed it.
 */
import assert from 'node:assert/strict'
import type { Stream } from '@libp2p/interface'
import { multiaddr } from '@multiformats/multiaddr'
import * as lp from 'it-length-prefixed'
import type { Actor } from '../../../actors/actor.js'
import { KeyPair } from '../../../actors/identity.js'
import { ACTOR_PROTOCOL } from '../../../dms/network/transport.js'
import { ManualClock } from '../../../actors/clock.js'
import { rejected, startPeer, type TestPeer } from '../../helpers/peers.js'

const MAX_FRAME = 64 * 1024
const TIMEOUT_MS = 10_000

/** Resolves when `s` is closed (at once if it is already). */
const closed = (s: Stream) =>
  new Promise<void>((resolve) => {
    if (s.status !== 'open') return resolve()
    s.addEventListener('close', () => resolve(), { once: true })
  })

/** The length prefix announcing `n` bytes, then the first `sent` of them. */
const partial = (n: number, sent: number) =>
  lp.encode
    .single(new Uint8Array(n))
    .subarray()
    .subarray(0, sent + 3)

describe('actors over libp2p: half-sent frames', function () {
  this.timeout(20_000)
  let clock: ManualClock
  let victim: TestPeer
  let honest: TestPeer
  let mallory: TestPeer
  let svc: Actor

  beforeEach(async () => {
    clock = new ManualClock()
    victim = await startPeer([], {
      clock,
      transport: {
        maxFrameBytes: MAX_FRAME,
        frameReadTimeoutMs: TIMEOUT_MS,
        maxUnfinishedBytesPerConnection: MAX_FRAME,
        maxUnfinishedBytes: 4 * MAX_FRAME,
      },
      system: { maxFrameBytes: MAX_FRAME },
    })
    honest = await startPeer([victim.addr])
    mallory = await startPeer([victim.addr])
    svc = victim.system.spawn('svc', KeyPair.generate()).on('/test/hit', () => 'ok')
  })
  afterEach(async () => {
    for (const p of [mallory, honest, victim]) await p?.stop()
  })

  const rawStream = (): Promise<Stream> =>
    mallory.host.dialProtocol(multiaddr(victim.addr), ACTOR_PROTOCOL, { signal: AbortSignal.timeout(5000) })

  /** An honest request still gets its reply. */
  const stillFlows = async () => {
    const client = honest.system.spawn(`client-${Math.random()}`, KeyPair.generate())
    assert.equal(await client.request(svc.handle, '/test/hit', {}, { timeoutMs: 5000 }), 'ok')
  }

  it('a frame announced and never finished: its stream is closed at the read deadline and counted as timeout', async () => {
    const s = await rawStream()
    s.send(partial(MAX_FRAME, MAX_FRAME - 1)) // one byte short, then silence
    await clock.scheduled(TIMEOUT_MS)
    assert.equal(victim.system.rejections.timeout, undefined)
    clock.advance(TIMEOUT_MS)
    await rejected(victim.system, 'timeout')
    await closed(s)
    assert.equal(victim.transport.budget.total, 0, 'the unfinished bytes are let go')
    await stillFlows()
    assert.deepEqual(victim.system.rejections, { timeout: 1 })
  })

  it('unfinished frames over the connection budget: the stream that crosses it is closed, counted as over_budget', async () => {
    const first = await rawStream()
    first.send(partial(MAX_FRAME, (MAX_FRAME * 3) / 4))
    await clock.scheduled(TIMEOUT_MS) // the victim holds the first stream's bytes
    const second = await rawStream()
    second.send(partial(MAX_FRAME, (MAX_FRAME * 3) / 4))
    await rejected(victim.system, 'over_budget')
    await closed(second)
    assert.equal(first.status, 'open', 'the stream within the budget is left alone')
    await stillFlows()
  })

  it('a stream that ends inside a length prefix is counted as unfinished, inside a frame as truncated', async () => {
    const a = await rawStream()
    a.send(new Uint8Array([0x80]))
    await a.close()
    await rejected(victim.system, 'unfinished')
    const b = await rawStream()
    b.send(partial(1000, 10))
    await b.close()
    await rejected(victim.system, 'truncated')
    await stillFlows()
    assert.deepEqual(victim.system.rejections, { unfinished: 1, truncated: 1 })
  })
})
