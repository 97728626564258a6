/**
 * The data plane's blob exchange (specs/data-plane.md). A node serves a blob only to the peers it
 * granted it to: the requester grants a job's inputs to the provider that holds the contract, the
 * provider grants an output archive to the job's requester. Grants are persisted so a restart
 * does not strand a transfer. A fetch pulls only what the local store lacks, in chunks, and the
 * store refuses the blob unless it hashes to its id.
 */
import { STORES } from '../store/tables.js'
import { rm } from 'node:fs/promises'
import type { Logger } from 'pino'
import { DmsError } from '../../actors/errors.js'
import { SerialQueue } from '../../actors/serial.js'
import { blobGrantProblem } from '../contracts/blob-grant.js'
import type { Chunk, ChunkRequest } from '../protocol/blob-payloads.js'
import { Repo, type Db } from '../store/db.js'
import { BlobNotFoundError, checkBlobId, type BlobStore } from './store.js'

/** Largest chunk one request may ask for: well inside one 4 MiB frame. */
export const MAX_CHUNK_BYTES = 1024 * 1024

export class BlobNotGrantedError extends DmsError {
  constructor(
    readonly sha256: string,
    readonly peer: string,
  ) {
    super('BLOB_NOT_GRANTED', `blob ${sha256} is not shared with ${peer}`)
  }
}

/** A chunk that is not the size asked for: every chunk but none may be short (a trickle). */
export class BadChunkError extends DmsError {
  constructor(
    readonly sha256: string,
    detail: string,
  ) {
    super('BAD_CHUNK', `blob ${sha256}: ${detail}`)
  }
}

export type { Chunk, ChunkRequest } from '../protocol/blob-payloads.js'

/** A blob to have locally: its id and size as the other side announced them. */
export interface BlobRef {
  sha256: string
  size: number
}

interface Grant {
  sha256: string
  peer: string
  at: number
  /**
   * An output archive: the jobs it was published for (the same bytes can be two jobs' outputs).
   * Each is released on its own; the last release revokes the grant and deletes the blob when no
   * other grant holds it.
   */
  heldFor?: string[]
  /**
   * The blob came into the store as a published archive (publishArchive), so its last release may
   * delete it. Absent: the node held those bytes for its own sake first (an input it fetched, a
   * blob its user put): a grantee's release never deletes them.
   */
  published?: boolean
  /**
   * A grant to look, not to keep (the contract-db checking a rejected result): it never holds the
   * blob against a release, and goes with it.
   */
  lookOnly?: boolean
}

/** A job's output archive released: `peer` no longer holds it for `jobId`. */
export interface Released {
  peer: string
  sha256: string
  jobId: string
}

export class BlobService {
  private readonly grants: Repo<Grant>
  /** Grants that read before they write (a job added to, or released from, an archive's holders), one at a time. */
  private readonly grantWrites = new SerialQueue()
  private readonly releaseListeners = new Set<(r: Released) => void>()

  constructor(
    private readonly c: {
      store: BlobStore
      db: Db
      log: Logger
      now: () => number
      /** Whether a local job uses the blob (its inputs, its fetched outputs): never deleted on a release. */
      inUse?: (sha256: string) => Promise<boolean>
      /**
       * Whether a grantee's release is put off (true: answered, nothing released now): a
       * provider keeps an unsettled contract's archive for its contract-db until the settlement
       * (dms/provider/kept-archives.ts).
       */
      deferRelease?: (r: Released) => Promise<boolean>
    },
    private readonly init: { chunkBytes?: number } = {},
  ) {
    this.grants = new Repo(c.db, STORES.blobGrants.name)
  }

  get store(): BlobStore {
    return this.c.store
  }

  /** Lets `peer` fetch `sha256` from this node. */
  async grant(peer: string, sha256: string, opts: { lookOnly?: boolean } = {}): Promise<void> {
    checkBlobId(sha256)
    const look = opts.lookOnly === true ? { lookOnly: true } : {}
    await this.grantWrites.run(() =>
      this.grants.put(`${sha256}/${peer}`, { sha256, peer, at: this.c.now(), ...look }),
    )
  }

  /**
   * Takes a run's output archive (the file the executor wrote) into the store, unless those bytes
   * are here already (the file is then dropped), and grants it to `peer` for `jobId`, who may later
   * release it for that job (`release`). One step under the grants' queue, so a release cannot
   * delete the blob between the check and the grant. The grant is written before the blob is
   * taken: a crash between the two leaves a grant of a blob not here (published again after a
   * restart, or released), never a blob that no grant marks as published, which nothing would
   * delete.
   */
  async publishArchive(
    peer: string,
    archive: { file: string; sha256: string; size: number },
    jobId: string,
  ): Promise<void> {
    checkBlobId(archive.sha256)
    return this.grantWrites.run(async () => {
      const { sha256 } = archive
      const key = `${sha256}/${peer}`
      const prior = await this.grants.get(key)
      const here = await this.c.store.has(sha256)
      const published = !here || prior?.published === true || (await this.publishedByAnother(sha256))
      await this.grants.put(key, {
        sha256,
        peer,
        at: this.c.now(),
        heldFor: [...new Set([...(prior?.heldFor ?? []), jobId])],
        ...(published ? { published: true } : {}),
      })
      // Here already (the same bytes, or taken before a restart: the file is gone then): the file
      // is dropped, not left in the store's scratch folder.
      if (here) return rm(archive.file, { force: true })
      try {
        await this.c.store.adopt(archive.file, archive)
      } catch (err) {
        // Not taken (a full disk, a short file): the grant goes back to what it was.
        await (prior !== undefined ? this.grants.put(key, prior) : this.grants.del(key)).catch(
          () => undefined,
        )
        throw err
      }
    })
  }

  /** Whether a grant of another peer holds `sha256` as a published archive. */
  private async publishedByAnother(sha256: string): Promise<boolean> {
    for await (const [key, value] of this.grants.sub.iterator({ gte: `${sha256}/`, lt: `${sha256}0` }))
      if (key.startsWith(`${sha256}/`) && (JSON.parse(value) as Grant).published === true) return true
    return false
  }

  /**
   * `peer` no longer needs the output archive `sha256` of job `jobId` (`/dms/blob/release`). Once
   * no job of `peer` holds it, its grant is revoked and the blob deleted when no other peer holds
   * a grant on it, it came into the store by being published, and no local job uses it. Only an
   * output archive granted for that job is released: a blob this node shared or held for its own
   * sake (a job's inputs, an upload) is never deleted by a grantee. Throws
   * BlobNotGrantedError when `peer` holds no such grant.
   */
  async release(peer: string, sha256: string, jobId: string): Promise<{ removed: boolean }> {
    checkBlobId(sha256)
    if ((await this.c.deferRelease?.({ peer, sha256, jobId })) === true) return { removed: false }
    return this.grantWrites.run(() => this.releaseGrant(peer, sha256, jobId))
  }

  /**
   * Calls `fn` after each release of a job's archive (by its grantee, or by this node for it);
   * returns the function that stops it.
   */
  onReleased(fn: (r: Released) => void): () => void {
    this.releaseListeners.add(fn)
    return () => this.releaseListeners.delete(fn)
  }

  private async releaseGrant(peer: string, sha256: string, jobId: string): Promise<{ removed: boolean }> {
    const out = await this.dropGrant(peer, sha256, jobId)
    for (const fn of this.releaseListeners) fn({ peer, sha256, jobId })
    return out
  }

  private async dropGrant(peer: string, sha256: string, jobId: string): Promise<{ removed: boolean }> {
    const key = `${sha256}/${peer}`
    const grant = await this.grants.get(key)
    if (grant?.heldFor?.includes(jobId) !== true) throw new BlobNotGrantedError(sha256, peer)
    const rest = grant.heldFor.filter((j) => j !== jobId)
    if (rest.length > 0) {
      await this.grants.put(key, { ...grant, heldFor: rest })
      return { removed: false }
    }
    await this.grants.del(key)
    const lookers: string[] = []
    for await (const other of this.grants.sub.keys({ gte: `${sha256}/`, lt: `${sha256}0` })) {
      if (!other.startsWith(`${sha256}/`)) continue
      if ((await this.grants.get(other))?.lookOnly !== true) return { removed: false }
      lookers.push(other)
    }
    if (grant.published !== true || (await this.c.inUse?.(sha256)) === true) return { removed: false }
    for (const looker of lookers) await this.grants.del(looker)
    await this.c.store.delete(sha256)
    this.c.log.info({ sha256, peer }, 'blob released by its grantee and deleted')
    return { removed: true }
  }

  async revoke(peer: string, sha256: string): Promise<void> {
    await this.grants.del(`${sha256}/${peer}`)
  }

  /** Answers one chunk request from `peer`. */
  async serve(peer: string, req: ChunkRequest): Promise<Chunk> {
    checkBlobId(req.sha256)
    if (
      !Number.isSafeInteger(req.offset) ||
      req.offset < 0 ||
      !Number.isSafeInteger(req.length) ||
      req.length <= 0 ||
      req.length > MAX_CHUNK_BYTES
    ) {
      throw new RangeError(`chunk must be 1..${MAX_CHUNK_BYTES} bytes at a non-negative offset`)
    }
    if (!(await this.granted(peer, req))) throw new BlobNotGrantedError(req.sha256, peer)
    const size = await this.c.store.size(req.sha256)
    if (size === undefined) throw new BlobNotFoundError(req.sha256)
    return { size, data: await this.c.store.read(req.sha256, req.offset, req.length) }
  }

  /**
   * `peer` may fetch the blob: granted to it, or granted to the owner of a delegation it carries,
   * which is signed by that owner, names `peer` and the blob, and has not expired.
   */
  private async granted(peer: string, req: ChunkRequest): Promise<boolean> {
    if ((await this.grants.get(`${req.sha256}/${peer}`)) !== undefined) return true
    const g = req.grant
    if (g === undefined) return false
    const problem = blobGrantProblem(g, { sha256: req.sha256, peer, now: this.c.now() })
    if (problem !== undefined) {
      this.c.log.debug({ peer, sha256: req.sha256, problem }, 'delegated grant refused')
      return false
    }
    return (await this.grants.get(`${req.sha256}/${g.owner}`)) !== undefined
  }

  /**
   * Makes sure every blob in `refs` is in the local store, fetching the missing ones through
   * `getChunk` (one request per chunk). Returns the ids it had to fetch. A blob that does not hash
   * to its id, or is not the announced size, rejects with BlobCorruptError and is not stored; a
   * chunk shorter or longer than asked for rejects with BadChunkError.
   */
  async fetchMissing(
    refs: BlobRef[],
    getChunk: (req: ChunkRequest) => Promise<Chunk>,
    onProgress?: (p: { sha256: string; received: number; size: number }) => void,
  ): Promise<string[]> {
    const fetched: string[] = []
    for (const ref of refs) {
      if (await this.c.store.has(ref.sha256)) continue
      await this.fetchOne(ref, getChunk, onProgress)
      fetched.push(ref.sha256)
    }
    return fetched
  }

  private async fetchOne(
    ref: BlobRef,
    getChunk: (req: ChunkRequest) => Promise<Chunk>,
    onProgress?: (p: { sha256: string; received: number; size: number }) => void,
  ): Promise<void> {
    const chunkBytes = Math.min(this.init.chunkBytes ?? MAX_CHUNK_BYTES, MAX_CHUNK_BYTES)
    const writer = await this.c.store.writer(ref.sha256, ref.size)
    try {
      while (writer.received < ref.size) {
        const length = Math.min(chunkBytes, ref.size - writer.received)
        const chunk = await getChunk({ sha256: ref.sha256, offset: writer.received, length })
        // Every chunk asked for lies inside the blob, so a server that has it answers exactly
        // `length` bytes: anything else (a 1-byte trickle, another size) ends the fetch at once.
        if (chunk.size !== ref.size)
          throw new BadChunkError(ref.sha256, `the peer says ${chunk.size} bytes, ${ref.size} announced`)
        if (chunk.data.length !== length)
          throw new BadChunkError(
            ref.sha256,
            `chunk at ${writer.received} is ${chunk.data.length} bytes, ${length} asked for`,
          )
        await writer.write(chunk.data)
        onProgress?.({ sha256: ref.sha256, received: writer.received, size: ref.size })
      }
      await writer.commit()
      this.c.log.debug({ sha256: ref.sha256, size: ref.size }, 'blob fetched')
    } catch (err) {
      await writer.abort()
      throw err
    }
  }
}
