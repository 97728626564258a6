/**
 * Hand-offs provider to provider, over real blob services (real level, real stores, a real output
 * archive from the streaming tar writer) with real signatures: the requester's side names each
 * file by its manifest hash and where its archive is; the upstream provider serves the archive
 * only under a valid delegation of its grant to the requester; the downstream provider cuts each
 * file out and checks it against the hash it was named by. Only the libp2p hop between the two
 * blob services is left out (`actor.request` calls the serving side directly).
 */
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Actor } from '../../../actors/system.js'
import { BlobService, type ChunkRequest } from '../../../dms/blobs/service.js'
import { fetchSourcedInputs } from '../../../dms/blobs/sourced.js'
import type { InputFile } from '../../../dms/blobs/staging.js'
import { BlobStore } from '../../../dms/blobs/store.js'
import { signBlobGrant } from '../../../dms/contracts/blob-grant.js'
import type { BlobGrant } from '../../../dms/contracts/model.js'
import { silentLogger } from '../../../dms/log.js'
import type { JobResult } from '../../../dms/protocol/messages.js'
import { openDb, type Db } from '../../../dms/store/db.js'
import { handOff } from '../../../dms/workflows/handoff.js'
import { newParty } from '../../helpers/contracts.js'
import { tarOf } from '../../helpers/tar.js'

const sha = (s: string) => createHash('sha256').update(s).digest('hex')
const NOW = 1_800_000_000_000

describe('workflow hand-offs, provider to provider', () => {
  const requester = newParty()
  const upstream = newParty()
  const downstream = newParty()
  let dir: string
  const dbs: Db[] = []
  let up: BlobService
  let down: BlobService
  let result: JobResult
  let archive: { sha256: string; size: number }

  const service = async (name: string) => {
    const db = await openDb(join(dir, `${name}-db`))
    dbs.push(db)
    const store = new BlobStore({ dir: join(dir, `${name}-blobs`) })
    await store.start()
    return new BlobService({ store, db, log: silentLogger, now: () => NOW })
  }
  /** The downstream provider's actor, its requests answered by the upstream's blob service. */
  const actorOf = (peer: string) =>
    ({ request: (_to: unknown, _b: unknown, req: ChunkRequest) => up.serve(peer, req) }) as unknown as Actor
  const grant = (o: Partial<Omit<BlobGrant, 'signature'>> = {}, key = requester.key) =>
    signBlobGrant(key, {
      sha256: archive.sha256,
      owner: requester.peer,
      grantee: downstream.peer,
      expiresAt: NOW + 60_000,
      ...o,
    })

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dms-handoff-'))
    up = await service('up')
    down = await service('down')
    const files = [
      { path: 'a.txt', content: Buffer.from('alpha') },
      { path: 'sub/b.txt', content: Buffer.from('beta') },
    ]
    const written = await tarOf(join(dir, 'out.tar'), files)
    archive = { sha256: written.sha256, size: written.size }
    await up.store.adopt(written.file, written)
    // What the upstream provider does when it publishes a result: its archive is granted to the requester.
    await up.grant(requester.peer, archive.sha256)
    result = {
      outputs: files.map((f) => ({
        path: f.path,
        sha256: sha(f.content.toString()),
        size: f.content.length,
      })),
      archive,
    } as unknown as JobResult
  })
  after(async () => {
    for (const db of dbs) await db.close()
    await rm(dir, { recursive: true, force: true })
  })

  const upJob = () => ({
    result,
    winner: { provider: upstream.peer, bidId: 'b', why: '' },
    providerAddrs: { [upstream.peer]: ['/ip4/127.0.0.1/tcp/1'] },
  })

  it('the requester names each file by its manifest hash and where its archive is: one file, or all under `as`', () => {
    assert.deepEqual(handOff({ fromTask: 'U', path: 'sub/b.txt', as: 'b.txt' }, upJob()), [
      {
        path: 'b.txt',
        sha256: sha('beta'),
        size: 4,
        source: {
          peer: upstream.peer,
          addrs: ['/ip4/127.0.0.1/tcp/1'],
          archive: archive.sha256,
          archiveSize: archive.size,
          entry: 'sub/b.txt',
        },
      },
    ])
    assert.deepEqual(
      handOff({ fromTask: 'U', as: 'u' }, upJob()).map((i) => [i.path, i.sha256]),
      [
        ['u/a.txt', sha('alpha')],
        ['u/sub/b.txt', sha('beta')],
      ],
    )
    assert.throws(() => handOff({ fromTask: 'U', path: 'nope', as: 'nope' }, upJob()), {
      code: 'HANDOFF_FAILED',
      message: 'U did not write nope',
    })
    assert.throws(() => handOff({ fromTask: 'U', as: 'u' }, { ...upJob(), winner: undefined }), {
      code: 'HANDOFF_FAILED',
    })
    assert.deepEqual(
      handOff({ fromTask: 'U', as: 'u' }, { result: { outputs: [] } as unknown as JobResult }),
      [],
    )
  })

  it('the upstream serves its archive only under a valid delegation of its grant to the requester', async () => {
    const req = (g?: BlobGrant) => ({
      sha256: archive.sha256,
      offset: 0,
      length: 16,
      ...(g ? { grant: g } : {}),
    })
    assert.equal((await up.serve(downstream.peer, req(grant()))).size, archive.size)
    const refused = async (g: BlobGrant | undefined, peer = downstream.peer) =>
      assert.rejects(up.serve(peer, req(g)), { code: 'BLOB_NOT_GRANTED' })
    await refused(undefined)
    await refused(grant(), newParty().peer) // carried by another peer
    await refused(grant({ expiresAt: NOW })) // expired
    await refused(grant({}, downstream.key)) // not signed by its owner
    const stranger = newParty()
    await refused(grant({ owner: stranger.peer }, stranger.key)) // an owner the archive was never granted to
    await refused({ ...grant(), sha256: sha('other') }) // altered after signing
  })

  it('the downstream fetches the archive and cuts out each file, checked against the hash it was named by', async () => {
    const inputs: InputFile[] = handOff({ fromTask: 'U', as: 'u' }, upJob()).map((i) => ({
      ...(i as InputFile),
      source: { ...i.source!, grant: grant() },
    }))
    assert.equal(await fetchSourcedInputs(actorOf(downstream.peer), down, inputs), 1)
    for (const [name, content] of [
      ['a.txt', 'alpha'],
      ['sub/b.txt', 'beta'],
    ])
      assert.equal(Buffer.from(await down.store.read(sha(content))).toString(), content, name)
    // A file named by a hash it does not have is refused.
    const lying = { ...inputs[0], sha256: sha('something else'), path: 'x' }
    await assert.rejects(fetchSourcedInputs(actorOf(downstream.peer), down, [lying]), {
      code: 'HANDOFF_MISMATCH',
    })
    // Without a valid grant nothing is fetched.
    const fresh = await service('fresh')
    const noGrant = {
      ...inputs[0],
      source: { ...inputs[0].source!, grant: grant({ grantee: requester.peer }) },
    }
    await assert.rejects(fetchSourcedInputs(actorOf(downstream.peer), fresh, [noGrant]), {
      code: 'BLOB_NOT_GRANTED',
    })
  })
})
