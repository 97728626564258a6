/** The providers rendezvous on the DHT (dms/network/discovery.ts), over a fake host and a ManualClock. */
import assert from 'node:assert/strict'
import { ManualClock } from '../../../actors/clock.js'
import { Rendezvous, type FoundEvent, type RendezvousHost } from '../../../dms/network/discovery.js'

const SELF = 'self'

function fakeHost(providers: string[], connected: Set<string>) {
  const calls = { provide: 0, find: 0, dials: [] as string[] }
  const host: RendezvousHost = {
    self: SELF,
    provide: () => {
      calls.provide++
      return Promise.resolve()
    },
    findProviders: async function* () {
      calls.find++
      await Promise.resolve()
      for (const id of providers) yield { id, addrs: [`/ip4/7.77.0.1/tcp/1/p2p/${id}`] }
    },
    connected: (p) => connected.has(p),
    dial: (p) => {
      calls.dials.push(p)
      if (p === 'unreachable') return Promise.reject(new Error('connection refused'))
      connected.add(p)
      return Promise.resolve()
    },
  }
  return { host, calls }
}

describe('Rendezvous', () => {
  it('announces a provider, looks up every interval and dials the providers it is not connected to', async () => {
    const clock = new ManualClock()
    const connected = new Set(['already'])
    const { host, calls } = fakeHost([SELF, 'already', 'p1', 'unreachable'], connected)
    const r = new Rendezvous({ host, clock }, { announce: true, lookupIntervalMs: 5000 })
    const found: FoundEvent[] = []
    r.onFound((e) => found.push(e))
    r.start()
    await clock.advanceAsync(1000)
    assert.deepEqual([calls.provide, calls.find], [1, 1], 'first round 1 s after start')
    assert.deepEqual(calls.dials, ['p1', 'unreachable'], 'itself and connected peers are not dialled')
    assert.deepEqual(
      found.map((e) => [e.peer, e.ok, e.dialled]),
      [
        ['already', true, false],
        ['p1', true, true],
        ['unreachable', false, true],
      ],
    )
    await clock.advanceAsync(5000)
    assert.deepEqual([calls.provide, calls.find], [2, 2], 'then every lookupIntervalMs')
    await r.stop()
    await clock.advanceAsync(60_000)
    assert.equal(calls.find, 2, 'no round after stop')
  })

  it('a node that is not a provider only looks up; dials per round are bounded', async () => {
    const clock = new ManualClock()
    const { host, calls } = fakeHost(['a', 'b', 'c', 'd'], new Set())
    const r = new Rendezvous({ host, clock }, { announce: false, maxDialsPerLookup: 2 })
    r.start()
    await clock.advanceAsync(1000)
    assert.equal(calls.provide, 0)
    assert.deepEqual(calls.dials, ['a', 'b'])
    await r.stop()
  })

  it('a round the DHT never answers (abort ignored) ends by its deadline, and the next round finds the provider', async () => {
    const clock = new ManualClock()
    const { host, calls } = fakeHost(['p1'], new Set())
    const never = new Promise<never>(() => {})
    let hang = true
    host.provide = () => {
      calls.provide++
      return hang ? never : Promise.resolve()
    }
    const r = new Rendezvous({ host, clock }, { announce: true, lookupIntervalMs: 2000 })
    const found: string[] = []
    r.onFound((e) => found.push(e.peer))
    r.start()
    await clock.advanceAsync(1000)
    assert.deepEqual([calls.provide, calls.find], [1, 0], 'the announce hangs')
    hang = false
    await clock.advanceAsync(5000)
    assert.equal(calls.find, 1, 'the hung round gave up at 5 s and went on to its lookup')
    await clock.advanceAsync(2000)
    assert.equal(calls.provide, 2, 'and the next round came')
    assert.deepEqual(found, ['p1'])

    // A lookup whose iterator never yields is given up the same way.
    const stalled = fakeHost([], new Set())
    stalled.host.findProviders = async function* () {
      stalled.calls.find++
      yield await never
    }
    const q = new Rendezvous({ host: stalled.host, clock }, { announce: false, lookupIntervalMs: 2000 })
    q.start()
    await clock.advanceAsync(1000)
    await clock.advanceAsync(5000)
    await clock.advanceAsync(2000)
    assert.equal(stalled.calls.find, 2, 'a second lookup after the stalled one')
    await Promise.all([r.stop(), q.stop()])
  })
})
