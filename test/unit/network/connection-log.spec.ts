/**
 * The connection log (network/upkeep.ts `logConnectionTypes`) over a host's connection events:
 * a relayed connection is logged when it opens, and a direct one to the same peer as its upgrade,
 * whether the relayed one is still open beside it or was closed just before (the side that did not
 * start the hole punch can see that order); a direct connection with no relayed one is not.
 */
import assert from 'node:assert/strict'
import type { Connection } from '@libp2p/interface'
import { ManualClock } from '../../../actors/clock.js'
import type { Host } from '../../../dms/network/host.js'
import { logConnectionTypes } from '../../../dms/network/upkeep.js'

const RELAY = '/ip4/7.77.0.10/tcp/4001/p2p/12D3KooWRelay/p2p-circuit'

function fakeHost() {
  const events = new EventTarget()
  const open = new Set<Connection>()
  const host = {
    addEventListener: events.addEventListener.bind(events),
    removeEventListener: events.removeEventListener.bind(events),
    getConnections: (peer: { toString(): string }) =>
      [...open].filter((c) => c.remotePeer.toString() === peer.toString()),
  } as unknown as Host
  const conn = (peer: string, addr: string) =>
    ({
      remotePeer: { toString: () => peer },
      remoteAddr: { toString: () => addr },
      direction: 'inbound',
    }) as unknown as Connection
  const emit = (type: string, c: Connection) => events.dispatchEvent(new CustomEvent(type, { detail: c }))
  return {
    host,
    conn,
    opened: (c: Connection) => (open.add(c), emit('connection:open', c)),
    closed: (c: Connection) => (open.delete(c), emit('connection:close', c)),
  }
}

function capture() {
  const lines: string[] = []
  const log = { info: (o: { peer: string }, msg: string) => lines.push(`${msg} ${o.peer}`) }
  return { lines, log: log as never }
}

describe('network/upkeep connection log', () => {
  it('logs the upgrade with the relayed connection still open beside the direct one', () => {
    const h = fakeHost()
    const { lines, log } = capture()
    logConnectionTypes(h.host, new ManualClock(), log)
    h.opened(h.conn('A', RELAY))
    h.opened(h.conn('A', '/ip4/7.77.0.11/tcp/4001'))
    assert.deepEqual(lines, ['relayed connection opened A', 'relayed connection upgraded to direct A'])
  })

  it('logs the upgrade when the other side closed the relayed connection just before', () => {
    const h = fakeHost()
    const clock = new ManualClock()
    const { lines, log } = capture()
    logConnectionTypes(h.host, clock, log)
    const relayed = h.conn('A', RELAY)
    h.opened(relayed)
    h.closed(relayed)
    clock.advance(50)
    h.opened(h.conn('A', '/ip4/7.77.0.11/tcp/4001'))
    assert.deepEqual(lines, ['relayed connection opened A', 'relayed connection upgraded to direct A'])
  })

  it('no upgrade for a direct connection long after, or with no relayed one', () => {
    const h = fakeHost()
    const clock = new ManualClock()
    const { lines, log } = capture()
    const off = logConnectionTypes(h.host, clock, log)
    const relayed = h.conn('A', RELAY)
    h.opened(relayed)
    h.closed(relayed)
    clock.advance(60_000)
    h.opened(h.conn('A', '/ip4/7.77.0.11/tcp/4001'))
    h.opened(h.conn('B', '/ip4/7.77.0.12/tcp/4001'))
    off()
    h.opened(h.conn('C', RELAY))
    assert.deepEqual(lines, ['relayed connection opened A'])
  })
})
