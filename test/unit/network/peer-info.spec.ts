/** Roles in the agent version, connection types (dms/network/peer-info.ts) and swarm keys (pnet.ts). */
import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { multiaddr } from '@multiformats/multiaddr'
import { connectionType, rolesOf, userAgent } from '../../../dms/network/peer-info.js'
import type { SwarmKeyError } from '../../../dms/network/pnet.js'
import { newSwarmKey, readSwarmKey } from '../../../dms/network/pnet.js'

describe('peer info', () => {
  it('announces roles in the agent version and reads them back; a non-DMS agent has none', () => {
    assert.equal(userAgent(['requester', 'provider']), 'dms/0.1.0 roles=requester+provider')
    assert.deepEqual(rolesOf(userAgent(['provider', 'relay'])), ['provider', 'relay'])
    assert.deepEqual(rolesOf(userAgent([])), [])
    assert.deepEqual(rolesOf('dms/0.1.0 roles=provider+admin'), ['provider'], 'unknown roles dropped')
    assert.equal(rolesOf('js-libp2p/3.3.0 UserAgent=v20'), undefined)
    assert.equal(rolesOf(undefined), undefined)
  })

  it('a circuit address is relayed, any other direct', () => {
    const relayed =
      '/ip4/7.77.0.10/tcp/4001/p2p/12D3KooWRpyBzy3d2t7ASVtqHNNXM6gwxk7Z3rH6X7NgNbHYgKjF/p2p-circuit'
    assert.equal(connectionType({ remoteAddr: multiaddr(relayed) }), 'relayed')
    assert.equal(connectionType({ remoteAddr: multiaddr('/ip4/7.77.0.11/tcp/4001') }), 'direct')
  })
})

describe('swarm keys', () => {
  let dir: string
  beforeEach(async () => (dir = await mkdtemp(join(tmpdir(), 'dms-pnet-'))))
  afterEach(() => rm(dir, { recursive: true, force: true }))

  it('reads a key written by newSwarmKey, with or without a final newline', async () => {
    const key = newSwarmKey()
    await writeFile(join(dir, 'a'), key)
    await writeFile(join(dir, 'b'), `${key}\n`)
    assert.deepEqual(readSwarmKey(join(dir, 'a')), readSwarmKey(join(dir, 'b')))
    assert.equal(readSwarmKey(join(dir, 'a')).length, 95)
  })

  it('refuses a missing or malformed file, naming the field and the fix', async () => {
    assert.throws(
      () => readSwarmKey(join(dir, 'none')),
      (e: SwarmKeyError) => e.code === 'INVALID_SWARM_KEY',
    )
    await writeFile(join(dir, 'bad'), '/key/swarm/psk/1.0.0/\n/base16/\nnot-hex')
    assert.throws(() => readSwarmKey(join(dir, 'bad')), /network\.pnet\.keyFile .*dms swarm-key/)
  })
})
