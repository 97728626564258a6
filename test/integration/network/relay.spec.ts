/**
 * A relay serves approved peers only (issue 29): real libp2p hosts on 127.0.0.1, a relay with
 * `network.relay.serve`, approval credentials signed by a contract-db key (checked offline, as
 * every node does), and strangers that are raw libp2p nodes with their own keys and no approval.
 * The same relay across network namespaces and a NAT, with real DMS nodes: test/e2e/netns.spec.ts.
 */
import assert from 'node:assert/strict'
import { noise } from '@chainsafe/libp2p-noise'
import { yamux } from '@chainsafe/libp2p-yamux'
import { circuitRelayTransport } from '@libp2p/circuit-relay-v2'
import { identify } from '@libp2p/identify'
import type { Connection, Libp2p, Stream } from '@libp2p/interface'
import { tcp } from '@libp2p/tcp'
import { multiaddr } from '@multiformats/multiaddr'
import { createLibp2p } from 'libp2p'
import { ManualClock, systemClock, type Clock } from '../../../actors/clock.js'
import { KeyPair } from '../../../actors/identity.js'
import { issueApproval } from '../../../dms/contracts/approval.js'
import type { Role } from '../../../dms/contracts/model.js'
import { silentLogger } from '../../../dms/log.js'
import { presentedCredential, relayCredentialCheck } from '../../../dms/contract-clients/relay-credentials.js'
import { createHost, type Host } from '../../../dms/network/host.js'
import type { RelayInit } from '../../../dms/network/nat.js'
import { ApprovalPresenter } from '../../../dms/network/relay/present.js'
import { startUpkeep } from '../../../dms/network/upkeep.js'
import { newParty, peerOf } from '../../helpers/contracts.js'

/** A protocol registered as DMS's are: not on limited connections (transport.ts). */
const ECHO = '/dms-test/echo/1.0.0'
const KiB = 1024

const cdb = newParty()
const stops: Array<() => unknown> = []

afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await Promise.resolve(stop()).catch(() => undefined)
})

async function until(test: () => boolean, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms
  while (!test()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

async function startRelay(relay: RelayInit = {}, clock?: Clock): Promise<{ host: Host; addr: string }> {
  const host = await createHost(
    KeyPair.generate(),
    {
      oneHost: true,
      relay: { serve: true, contractDb: cdb.peer, ...relay },
      nat: { autonat: false, holePunching: false },
    },
    silentLogger,
    clock,
    relayCredentialCheck(),
  )
  await host.start()
  stops.push(() => host.stop())
  return { host, addr: host.getMultiaddrs()[0].toString() }
}

/** A DMS host that presents a credential of `cdb` to the relay, and reserves a slot when `reserve`. */
async function startMember(
  relayAddr: string,
  opts: {
    reserve?: boolean
    roles?: Role[]
    clock?: Clock
    ttlMs?: number
    /** The credential comes later (as on a node's first start): `presenter.renewed()` once it has. */
    late?: { has: boolean; presenter?: ApprovalPresenter; settleMs?: number }
  } = {},
): Promise<Host> {
  const key = KeyPair.generate()
  const clock = opts.clock ?? systemClock
  const host = await createHost(key, {
    oneHost: true,
    // With `late`, the relay is dialled (and again after a disconnect) by the upkeep alone, as on a node.
    bootstrap: opts.late === undefined ? [relayAddr] : [],
    relay: { reserve: opts.reserve ?? false },
    nat: { autonat: false, holePunching: false },
  })
  const cred = issueApproval(cdb.key, {
    peer: peerOf(key),
    contractDb: cdb.peer,
    now: clock.now(),
    ...(opts.roles !== undefined ? { roles: opts.roles } : {}),
    ...(opts.ttlMs !== undefined ? { ttlMs: opts.ttlMs } : {}),
  })
  const late = opts.late
  const presenter = new ApprovalPresenter(
    {
      host,
      clock,
      log: silentLogger,
      credentials: () => (late === undefined || late.has ? [presentedCredential(cred)] : []),
    },
    // The reconnect after a refusal is looked at only with `late`.
    { reserve: late !== undefined, reserveSettleMs: late?.settleMs },
  )
  if (late !== undefined) late.presenter = presenter
  if (late !== undefined) {
    const upkeep = startUpkeep(
      host,
      { clock: systemClock },
      { bootstrap: [relayAddr], keeper: { minBackoffMs: 100 } },
    )
    stops.push(() => upkeep.stop())
  }
  await host.handle(ECHO, (stream) => echo(stream))
  await host.start()
  await presenter.start()
  stops.push(async () => {
    presenter.stop()
    await host.stop()
  })
  return host
}

/** A libp2p node with its own key and no DMS part: it asks every relay it meets for a slot. */
async function startStranger(relayAddr: string): Promise<Libp2p> {
  const node = await createLibp2p({
    addresses: { listen: ['/ip4/127.0.0.1/tcp/0', '/p2p-circuit'] },
    transports: [tcp(), circuitRelayTransport()],
    connectionEncrypters: [noise()],
    streamMuxers: [yamux()],
    connectionManager: { inboundConnectionThreshold: Infinity },
    services: { identify: identify() },
  })
  await node.start()
  stops.push(() => node.stop())
  await node.dial(multiaddr(relayAddr))
  return node
}

function echo(stream: Stream): void {
  stream.addEventListener('message', (evt) => {
    if (stream.writeStatus === 'writable') stream.send(evt.data)
  })
  stream.addEventListener('remoteCloseWrite', () => void stream.close().catch(() => undefined))
}

/** Reservations the relay refused to peers without a valid credential. */
const refusals = (relay: Host) =>
  (relay.services.relay as { gate?: { refused: { not_approved: number } } } | undefined)?.gate?.refused
    .not_approved ?? 0
const reserved = (host: Libp2p) => host.getMultiaddrs().some((a) => a.toString().includes('/p2p-circuit'))
const circuitTo = (relayAddr: string, peer: Libp2p) =>
  multiaddr(`${relayAddr}/p2p-circuit/p2p/${peer.peerId.toString()}`)

/** Sends `bytes` on a new ECHO stream over `conn` and resolves with how many came back. */
async function pump(conn: Connection, bytes: number): Promise<number> {
  const stream = await conn.newStream(ECHO)
  let back = 0
  const done = new Promise<void>((resolve) => {
    stream.addEventListener('message', (evt) => {
      back += evt.data.byteLength
      if (back >= bytes) resolve()
    })
    stream.addEventListener('close', () => resolve())
  })
  const chunk = new Uint8Array(16 * KiB)
  for (let sent = 0; sent < bytes && stream.writeStatus === 'writable'; sent += chunk.length)
    if (!stream.send(chunk.subarray(0, Math.min(chunk.length, bytes - sent))))
      await stream.onDrain().catch(() => undefined)
  await done
  if (stream.status === 'open') await stream.close().catch(() => undefined)
  return back
}

describe('relay: only approved peers hold slots and are relayed', function () {
  this.timeout(60_000)

  it('strangers that ask a relay for slots get none (on main they took every slot)', async () => {
    const relay = await startRelay({ maxReservations: 4 })
    const strangers = await Promise.all(Array.from({ length: 6 }, () => startStranger(relay.addr)))
    // Each asks the relay it identified for a slot, and is refused once the wait for a credential is over.
    await until(() => refusals(relay.host) >= 6 || strangers.some(reserved), 'six answers')
    assert.deepEqual(
      strangers.filter(reserved).map((s) => s.peerId.toString()),
      [],
      'no stranger holds a relayed address',
    )
    assert.equal(relay.host.services.relay?.reservations.size, 0)
  })

  it('an approved provider reserves and is reached through the relay while strangers try to fill the slots; strangers relay no bytes', async () => {
    const relay = await startRelay({ maxReservations: 4 })
    const strangers = await Promise.all(Array.from({ length: 6 }, () => startStranger(relay.addr)))
    const provider = await startMember(relay.addr, { reserve: true, roles: ['provider'] })
    await until(() => reserved(provider), 'the provider holds a slot')
    const requester = await startMember(relay.addr, { roles: ['requester'] })
    const service = relay.host.services.relay!
    await until(() => service.gate.refused.not_approved >= 6, 'the strangers refused')
    assert.deepEqual(
      [...service.reservations.keys()].map(String),
      [provider.peerId.toString()],
      'the provider holds the only slot',
    )

    const conn = await requester.dial(circuitTo(relay.addr, provider))
    assert.match(conn.remoteAddr.toString(), /p2p-circuit/)
    assert.equal(conn.limits, undefined, 'unlimited to libp2p: DMS protocols run on it')
    assert.equal(await pump(conn, 64 * KiB), 64 * KiB)
    assert.ok(service.meter.bytes >= 128 * KiB, 'the relay metered both ways')

    const refused = service.gate.refused.not_approved
    await assert.rejects(
      strangers[0].dial(circuitTo(relay.addr, provider)),
      /PERMISSION_DENIED|NO_RESERVATION/,
    )
    assert.equal(service.gate.refused.not_approved, refused + 1)
    assert.equal(service.meter.relayed(strangers[0].peerId.toString()), 0, 'a stranger relays no bytes')
    assert.equal(service.meter.circuits(strangers[0].peerId.toString()), 0)
  })

  it('a provider refused for want of a credential reconnects once it has one, and reserves', async () => {
    const relay = await startRelay()
    const late: { has: boolean; presenter?: ApprovalPresenter; settleMs?: number } = {
      has: false,
      settleMs: 500,
    }
    const provider = await startMember(relay.addr, { reserve: true, roles: ['provider'], late })
    await until(() => refusals(relay.host) >= 1, 'the slot refused: no credential yet')
    assert.equal(reserved(provider), false)
    late.has = true
    late.presenter?.renewed()
    await until(() => reserved(provider), 'a slot after the reconnect')
    assert.deepEqual([...relay.host.services.relay!.reservations.keys()].map(String), [
      provider.peerId.toString(),
    ])
  })

  it('caps reservations per address and keeps the providers share', async () => {
    const relay = await startRelay({ maxReservations: 4, providerShare: 0.5, maxReservationsPerAddress: 3 })
    const gate = relay.host.services.relay!.gate
    const one = async (roles: Role[]) => {
      const before = { ...gate.refused }
      const m = await startMember(relay.addr, { reserve: true, roles })
      await until(
        () =>
          reserved(m) || Object.entries(gate.refused).some(([k, n]) => n > before[k as keyof typeof before]),
        'a slot or a refusal',
      )
      return reserved(m)
        ? 'reserved'
        : Object.keys(gate.refused).find(
            (k) => gate.refused[k as keyof typeof before] > before[k as keyof typeof before],
          )
    }
    assert.equal(await one(['requester']), 'reserved')
    assert.equal(await one(['requester']), 'reserved')
    assert.equal(await one(['requester']), 'provider_share', 'half the slots are kept for providers')
    assert.equal(await one(['provider']), 'reserved')
    assert.equal(await one(['provider']), 'address_cap', 'three from 127.0.0.1 already')
  })

  it('limits each relayed connection and each peer, and drops a reservation whose approval expired', async () => {
    const clock = new ManualClock(Date.now())
    const relay = await startRelay(
      {
        dataLimitBytes: 256 * KiB,
        peerDataLimitBytes: 500 * KiB,
        peerDataWindowMs: 60_000,
        durationLimitMs: 30_000,
        maxCircuitsPerPeer: 4,
      },
      clock,
    )
    const service = relay.host.services.relay!
    const provider = await startMember(relay.addr, { reserve: true, clock, ttlMs: 600_000 })
    await until(() => reserved(provider), 'the provider holds a slot')
    const requester = await startMember(relay.addr, { clock, ttlMs: 120_000 })
    await until(
      () => service.approvals.approved(requester.peerId.toString()) !== undefined,
      'the requester presented',
    )

    // Relayed connections of one peer, until its total for the window (both ways) is spent: the
    // third is cut half way through, and no new one is relayed until the window ends.
    const relayedOnce = async (bytes: number) => {
      const conn = await requester.dial(circuitTo(relay.addr, provider))
      const back = await pump(conn, bytes)
      if (conn.status === 'open') await conn.close()
      return back
    }
    assert.equal(await relayedOnce(100 * KiB), 100 * KiB)
    assert.equal(await relayedOnce(100 * KiB), 100 * KiB)
    assert.ok((await relayedOnce(100 * KiB)) < 100 * KiB, 'cut at the total')
    assert.equal(service.meter.cut.peer_data, 1)
    await assert.rejects(
      requester.dial(circuitTo(relay.addr, provider)),
      /PERMISSION_DENIED/,
      'over its total',
    )
    assert.equal(service.gate.refused.peer_data, 1)
    clock.advance(60_000)

    // A new window: one relayed connection is cut once it has carried more than dataLimitBytes.
    let conn = await requester.dial(circuitTo(relay.addr, provider))
    const back = await pump(conn, 512 * KiB)
    assert.ok(back < 512 * KiB, `cut before all came back (${back})`)
    assert.equal(service.meter.cut.data, 1)
    await until(() => conn.status !== 'open', 'the relayed connection closed')

    // Relayed again, until the duration limit cuts it.
    conn = await requester.dial(circuitTo(relay.addr, provider))
    assert.equal(await pump(conn, 16 * KiB), 16 * KiB)
    clock.advance(30_000)
    assert.equal(service.meter.cut.duration, 1)
    await until(() => conn.status !== 'open', 'cut at the duration limit')

    // The requester's credential has expired (120 s), not renewed: it is relayed no more; the
    // provider's reservation goes with its credential at the sweep after it expires.
    clock.advance(30_000)
    const refused = service.gate.refused.not_approved
    const dial = requester.dial(circuitTo(relay.addr, provider))
    // The relay waits (on its clock) for a renewed credential before it refuses.
    await until(() => service.approvals.waiting > 0, 'the relay waiting for a credential')
    clock.advance(3000)
    await assert.rejects(dial, /PERMISSION_DENIED/, 'expired')
    assert.equal(service.gate.refused.not_approved, refused + 1)
    clock.advance(600_000)
    await until(() => service.reservations.size === 0, 'the expired reservation dropped')
  })
})
