/**
 * One protocol version in the envelope (specs/protocol.md, "Versions"): a real contract-db (its
 * actor system built by dms/peer-base.ts) answers a peer of its own version and refuses one of
 * another before its payload is decoded (`bad_version`), whatever that peer sends.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { KeyPair } from '../../../actors/identity.js'
import { ContractDbNode } from '../../../dms/contract-db/node.js'
import { W } from '../../../dms/protocol/behaviours.js'
import { handleOf, INBOX } from '../../../dms/protocol/handles.js'
import { PROTOCOL_VERSION } from '../../../dms/protocol/version.js'
import { TEST_PASSPHRASE } from '../../helpers/network.js'
import { startPeer, type TestPeer } from '../../helpers/peers.js'

describe('protocol version: a contract-db talks only to peers of its version', function () {
  this.timeout(30_000)
  let root: string
  let cdb: ContractDbNode
  const peers: TestPeer[] = []
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'dms-version-'))
    cdb = new ContractDbNode(
      { dataDir: join(root, 'cdb'), oneHost: true, socket: false },
      { passphrase: TEST_PASSPHRASE },
    )
    await cdb.start()
  })
  after(async () => {
    for (const p of peers) await p.stop()
    await cdb?.stop()
    await rm(root, { recursive: true, force: true })
  })

  it(`speaks protocol ${PROTOCOL_VERSION}: a peer of it is answered, a peer of protocol 1 refused as bad_version`, async () => {
    const ask = async (version: number) => {
      const peer = await startPeer(cdb.addrs(), { system: { version } })
      peers.push(peer)
      const actor = peer.system.spawn('asker', KeyPair.generate())
      return actor.request(
        handleOf(cdb.peerId, INBOX.contractDb, cdb.addrs()),
        W.balance,
        {},
        { timeoutMs: 2000 },
      )
    }
    assert.ok(PROTOCOL_VERSION > 1)
    // An account nobody credited, but answered: the same version talks.
    assert.deepEqual(await ask(PROTOCOL_VERSION), { balance: 0, escrow: 0 })
    assert.equal(cdb.system.rejections.bad_version, undefined)
    await assert.rejects(ask(1), { name: 'RequestTimeoutError' })
    assert.equal(cdb.system.rejections.bad_version, 1)
  })
})
