import assert from 'node:assert/strict'
import { StreamState } from '@chainsafe/libp2p-yamux/stream'
import { KeyPair } from '../../../actors/identity.js'
import { ACTOR_PROTOCOL } from '../../../dms/network/transport.js'
import { halfWindowUpdates, windowUpdateDue } from '../../../dms/network/yamux-window.js'
import { startPeer, type TestPeer } from '../../helpers/peers.js'

/** Yamux frame type of a window update (the yamux spec: data 0, window update 1). */
const WINDOW_UPDATE = 1
const KiB = 1024

describe('yamux window updates at half a window (dms/network/yamux-window.ts)', () => {
  describe('windowUpdateDue', () => {
    const est = (used: number) => ({
      state: StreamState.Established,
      recvWindow: 256 * KiB,
      recvWindowCapacity: 256 * KiB - used,
    })
    it('waits while less than half the window is used, sends from half on', () => {
      assert.equal(windowUpdateDue(est(0)), false)
      assert.equal(windowUpdateDue(est(1)), false)
      assert.equal(windowUpdateDue(est(128 * KiB - 1)), false)
      assert.equal(windowUpdateDue(est(128 * KiB)), true)
      assert.equal(windowUpdateDue(est(256 * KiB)), true)
    })
    it('always lets handshake flags and paused streams through', () => {
      for (const state of [StreamState.Init, StreamState.SYNReceived, StreamState.Paused])
        assert.equal(windowUpdateDue({ ...est(0), state }), true)
    })
    it('a stream without the window fields (a renamed library field) is never held back', () => {
      const renamed = { state: StreamState.Established } as unknown as Parameters<typeof windowUpdateDue>[0]
      assert.equal(windowUpdateDue(renamed), true)
    })
    it('a library without sendWindowUpdate is left with its own rule', () => {
      const proto = {}
      halfWindowUpdates(proto)
      assert.equal('sendWindowUpdate' in proto, false)
    })
  })

  describe('between two real nodes', () => {
    let a: TestPeer
    let b: TestPeer
    beforeEach(async () => {
      a = await startPeer()
      b = await startPeer([a.addr])
    })
    afterEach(async () => {
      await b?.stop()
      await a?.stop()
    })

    it('many small messages: every one arrives, the receiver sends a handful of window updates, not one each', async () => {
      const server = a.system.spawn('sink', a.key)
      let seen = 0
      let all!: () => void
      const done = new Promise<void>((r) => (all = r))
      const N = 300
      server.on('/test/sink', () => {
        if (++seen === N) all()
      })
      const client = b.system.spawn('client', KeyPair.generate())
      const body = { pad: 'x'.repeat(1 * KiB) }
      await client.send(server.handle, '/test/sink', body) // opens the stream
      const conn = a.host.getConnections(b.host.peerId)[0]
      const inbound = conn.streams.find((s) => s.protocol === ACTOR_PROTOCOL)
      assert.ok(inbound, 'the actor stream at the receiver')
      const s = inbound as unknown as { sendFrame: (h: { type: number }, d?: unknown) => boolean }
      let updates = 0
      const send = s.sendFrame
      s.sendFrame = (h, d) => {
        if (h.type === WINDOW_UPDATE) updates++
        return send(h, d)
      }
      for (let i = 1; i < N; i++) await client.send(server.handle, '/test/sink', body)
      await done
      // About 1.6 KiB an envelope: 300 of them fill 128 KiB about 3-4 times (one update each);
      // before, every data frame was answered with its own update (300).
      assert.ok(updates >= 1 && updates <= 8, `window updates sent: ${updates}`)
    })

    it('frames larger than the window still flow (the sender is never left without room)', async () => {
      const server = a.system.spawn('big', a.key)
      const sizes: number[] = []
      let all!: () => void
      const done = new Promise<void>((r) => (all = r))
      server.on('/test/big', (m) => {
        sizes.push((m.payload as { pad: string }).pad.length)
        if (sizes.length === 3) all()
      })
      const client = b.system.spawn('client', KeyPair.generate())
      for (let i = 0; i < 3; i++)
        await client.send(server.handle, '/test/big', { pad: 'y'.repeat(1024 * KiB) })
      await done
      assert.deepEqual(sizes, [1024 * KiB, 1024 * KiB, 1024 * KiB])
    })
  })
})
