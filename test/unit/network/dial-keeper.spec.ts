/** The dial keeper (dms/network/dial-keeper.ts): re-dials with backoff on a ManualClock. */
import assert from 'node:assert/strict'
import { ManualClock } from '../../../actors/clock.js'
import {
  DialKeeper,
  type DialEvent,
  type KeeperHost,
  type PeerEvent,
} from '../../../dms/network/dial-keeper.js'

const A = '12D3KooWAaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'
const B = '12D3KooWBbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb'

/** A host whose peers are reachable when `up` holds them; every dial is recorded. */
class FakeHost implements KeeperHost {
  up = new Set<string>()
  open = new Set<string>()
  dials: Array<{ peer: string; addrs: string[]; at: number }> = []
  private fns = new Set<(peer: string, event: PeerEvent) => void>()
  constructor(private readonly clock: ManualClock) {}

  dial(peer: string, addrs: string[]): Promise<void> {
    this.dials.push({ peer, addrs, at: this.clock.now() })
    if (!this.up.has(peer)) return Promise.reject(new Error('connection refused'))
    this.connect(peer)
    return Promise.resolve()
  }
  connected(peer: string): boolean {
    return this.open.has(peer)
  }
  onPeer(fn: (peer: string, event: PeerEvent) => void): () => void {
    this.fns.add(fn)
    return () => this.fns.delete(fn)
  }
  /** A connection; `dms`: the peer then identifies as a DMS node. */
  connect(peer: string, dms = true): void {
    this.open.add(peer)
    for (const fn of this.fns) fn(peer, 'connect')
    if (dms) for (const fn of this.fns) fn(peer, 'dms')
  }
  drop(peer: string): void {
    this.open.delete(peer)
    for (const fn of this.fns) fn(peer, 'disconnect')
  }
}

describe('DialKeeper', () => {
  let clock: ManualClock
  let host: FakeHost
  let keeper: DialKeeper | undefined
  const events: DialEvent[] = []

  beforeEach(() => {
    clock = new ManualClock()
    host = new FakeHost(clock)
    events.length = 0
  })
  afterEach(() => keeper?.stop())

  const keep = (init: ConstructorParameters<typeof DialKeeper>[1]) => {
    keeper = new DialKeeper({ host, clock }, { minBackoffMs: 500, maxBackoffMs: 4000, ...init })
    keeper.onDial((e) => events.push(e))
    keeper.start()
    return keeper
  }

  it('dials the bootstrap list at start and retries a failed dial with doubling backoff', async () => {
    keep({ bootstrap: [`/ip4/10.0.0.1/tcp/1/p2p/${A}`] })
    await clock.advanceAsync(0)
    assert.deepEqual(host.dials[0], { peer: A, addrs: [`/ip4/10.0.0.1/tcp/1/p2p/${A}`], at: clock.now() })
    const t0 = host.dials[0].at
    await clock.advanceAsync(500 + 1000 + 2000 + 4000 + 4000)
    assert.deepEqual(
      host.dials.map((d) => d.at - t0),
      [0, 500, 1500, 3500, 7500, 11500],
      'backoff 500, 1000, 2000, 4000, then capped at 4000',
    )
    host.up.add(A)
    await clock.advanceAsync(4000)
    assert.equal(host.connected(A), true)
    assert.deepEqual(events.at(-1), { peer: A, attempt: 6, kind: 'bootstrap', ok: true })
  })

  it('re-dials a peer it was connected to after a disconnect, from the first backoff again', async () => {
    keep({})
    host.up.add(B)
    host.connect(B) // B dialled us: now a known peer
    host.up.delete(B)
    host.drop(B) // B restarts
    await clock.advanceAsync(500)
    assert.equal(host.dials.length, 1, 'first re-dial after 500 ms')
    host.up.add(B) // B is back
    await clock.advanceAsync(1000)
    assert.equal(host.connected(B), true)
    assert.deepEqual(
      events.map((e) => [e.attempt, e.ok]),
      [
        [1, false],
        [2, true],
      ],
    )
    host.drop(B)
    await clock.advanceAsync(500)
    assert.equal(events.at(-1)?.attempt, 1, 'a connection resets the backoff')
    assert.equal(events.at(-1)?.ok, true)
  })

  it('forgets a known peer unreachable for forgetAfterMs, never a bootstrap peer', async () => {
    keep({ bootstrap: [`/ip4/10.0.0.1/tcp/1/p2p/${A}`], forgetAfterMs: 10_000 })
    host.connect(B)
    host.drop(B)
    await clock.advanceAsync(60_000)
    const kept = keeper!.keptPeers().map((p) => p.peer)
    assert.deepEqual(kept, [A])
    const lastB = host.dials.filter((d) => d.peer === B).at(-1)!.at
    const lastA = host.dials.filter((d) => d.peer === A).at(-1)!.at
    assert.ok(lastA > lastB + 40_000, 'the bootstrap peer is still being dialled')
  })

  it('does not re-dial a peer that never identified as a DMS node', async () => {
    keep({})
    host.connect(B, false)
    host.drop(B)
    await clock.advanceAsync(60_000)
    assert.deepEqual(host.dials, [])
  })

  it('keeps at most maxKnownPeers known peers, dropping the longest unseen', () => {
    keep({ maxKnownPeers: 1 })
    host.connect(A)
    host.connect(B)
    assert.deepEqual(
      keeper!.keptPeers().map((p) => p.peer),
      [B],
    )
  })

  it('stops every timer at stop', async () => {
    keep({ bootstrap: [`/ip4/10.0.0.1/tcp/1/p2p/${A}`] })
    await clock.advanceAsync(0)
    keeper!.stop()
    assert.equal(clock.pending, 0)
    await clock.advanceAsync(60_000)
    assert.equal(host.dials.length, 1)
  })
})
