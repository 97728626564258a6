/**
 * Content-addressed blobs on disk: `<dir>/<sha256 hex>`, written atomically (temp file, hash
 * checked, rename), so a blob that exists under its name always has that hash. Job inputs and
 * output archives travel as blobs (specs/data-plane.md).
 */
import { DmsError } from '../../actors/errors.js'
import { createHash, randomBytes } from 'node:crypto'
import { createReadStream, promises as fs } from 'node:fs'
import { join } from 'node:path'

export const SHA256_HEX = /^[0-9a-f]{64}$/

/** Largest blob a store accepts by default (`BlobStoreInit.maxBlobBytes`). */
export const MAX_BLOB_BYTES = 1024 * 1024 * 1024

export class InvalidBlobIdError extends DmsError {
  constructor(readonly id: string) {
    super(
      'INVALID_BLOB_ID',
      `not a blob id (64 lowercase hex characters of sha256): ${JSON.stringify(id.slice(0, 80))}`,
    )
  }
}

export class BlobNotFoundError extends DmsError {
  constructor(readonly sha256: string) {
    super('BLOB_NOT_FOUND', `blob ${sha256} is not in the store`)
  }
}

/** Received bytes do not hash to the blob id they were sent for (or are not its size). */
export class BlobCorruptError extends DmsError {
  constructor(
    readonly sha256: string,
    detail: string,
  ) {
    super('BLOB_CORRUPT', `blob ${sha256} rejected: ${detail}`)
  }
}

export class BlobTooLargeError extends DmsError {
  constructor(
    readonly size: number,
    readonly limit: number,
  ) {
    super('BLOB_TOO_LARGE', `blob of ${size} bytes exceeds the limit of ${limit} bytes`)
  }
}

export function checkBlobId(id: string): void {
  if (!SHA256_HEX.test(id)) throw new InvalidBlobIdError(id)
}

export interface BlobStoreInit {
  dir: string
  /** Largest blob accepted. @default 1 GiB */
  maxBlobBytes?: number
}

export class BlobStore {
  readonly dir: string
  readonly maxBlobBytes: number
  /** Scratch space on the store's file system, emptied at start (e.g. for archives being written). */
  readonly tmpDir: string

  constructor(init: BlobStoreInit) {
    this.dir = init.dir
    this.tmpDir = join(init.dir, 'tmp')
    this.maxBlobBytes = init.maxBlobBytes ?? MAX_BLOB_BYTES
  }

  /** Creates the folders and drops temp files a crash left behind. */
  async start(): Promise<void> {
    await fs.mkdir(this.dir, { recursive: true, mode: 0o700 })
    await fs.rm(this.tmpDir, { recursive: true, force: true })
    await fs.mkdir(this.tmpDir, { mode: 0o700 })
  }

  path(sha256: string): string {
    checkBlobId(sha256)
    return join(this.dir, sha256)
  }

  /** The blob's size, or undefined when it is not here. */
  async size(sha256: string): Promise<number | undefined> {
    try {
      return (await fs.stat(this.path(sha256))).size
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
      throw err
    }
  }

  async has(sha256: string): Promise<boolean> {
    return (await this.size(sha256)) !== undefined
  }

  /** Stores `data` and returns its id. Storing a blob that is already here is a no-op. */
  async put(data: Uint8Array): Promise<string> {
    if (data.length > this.maxBlobBytes) throw new BlobTooLargeError(data.length, this.maxBlobBytes)
    const sha256 = createHash('sha256').update(data).digest('hex')
    if (await this.has(sha256)) return sha256
    const w = await this.writer(sha256, data.length)
    await w.write(data)
    await w.commit()
    return sha256
  }

  /**
   * Stores a stream of unknown content (an upload): written to a temp file while hashed, then moved
   * under its hash. Refuses more than `maxBlobBytes`, keeping nothing.
   */
  async putStream(stream: AsyncIterable<Uint8Array>): Promise<{ sha256: string; size: number }> {
    const tmp = join(this.tmpDir, `upload.${randomBytes(6).toString('hex')}`)
    const handle = await fs.open(tmp, 'wx', 0o644)
    const hash = createHash('sha256')
    let size = 0
    try {
      for await (const chunk of stream) {
        size += chunk.length
        if (size > this.maxBlobBytes) throw new BlobTooLargeError(size, this.maxBlobBytes)
        hash.update(chunk)
        await handle.write(chunk)
      }
      await handle.close()
      const sha256 = hash.digest('hex')
      await fs.rename(tmp, join(this.dir, sha256))
      return { sha256, size }
    } catch (err) {
      await handle.close().catch(() => {})
      await fs.rm(tmp, { force: true })
      throw err
    }
  }

  /**
   * Takes `file`, which this node wrote and hashed as it wrote it (an output archive), as the blob
   * `ref.sha256`: renamed into place when it is on the store's file system, otherwise copied while
   * hashed and checked. Its size is checked either way. The file is gone afterwards, taken or not.
   */
  async adopt(file: string, ref: { sha256: string; size: number }): Promise<void> {
    checkBlobId(ref.sha256)
    try {
      const { size } = await fs.stat(file)
      if (size !== ref.size) throw new BlobCorruptError(ref.sha256, `file holds ${size} of ${ref.size} bytes`)
      if (size > this.maxBlobBytes) throw new BlobTooLargeError(size, this.maxBlobBytes)
      if (await this.has(ref.sha256)) return
      try {
        await fs.rename(file, this.path(ref.sha256))
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err
        const w = await this.writer(ref.sha256, size)
        try {
          for await (const chunk of createReadStream(file)) await w.write(chunk as Buffer)
          await w.commit()
        } catch (copyErr) {
          await w.abort()
          throw copyErr
        }
      }
    } finally {
      await fs.rm(file, { force: true })
    }
  }

  /** A stream of the whole blob, read from disk as it is consumed. */
  async stream(sha256: string): Promise<{ size: number; stream: NodeJS.ReadableStream }> {
    const size = await this.size(sha256)
    if (size === undefined) throw new BlobNotFoundError(sha256)
    return { size, stream: createReadStream(this.path(sha256)) }
  }

  /** Reads `length` bytes at `offset` (fewer at the end of the blob). */
  async read(sha256: string, offset = 0, length?: number): Promise<Uint8Array> {
    let handle
    try {
      handle = await fs.open(this.path(sha256), 'r')
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new BlobNotFoundError(sha256)
      throw err
    }
    try {
      const { size } = await handle.stat()
      const n = Math.max(0, Math.min(length ?? size, size - offset))
      const buf = Buffer.alloc(n)
      if (n > 0) await handle.read(buf, 0, n, offset)
      return buf
    } finally {
      await handle.close()
    }
  }

  async delete(sha256: string): Promise<void> {
    await fs.rm(this.path(sha256), { force: true })
  }

  /**
   * A writer for a blob arriving in pieces: bytes go to a temp file while being hashed; `commit`
   * checks the size and hash and only then moves the file into place. `abort` drops it.
   */
  async writer(sha256: string, size: number): Promise<BlobWriter> {
    checkBlobId(sha256)
    if (!Number.isSafeInteger(size) || size < 0) throw new BlobCorruptError(sha256, `bad size ${size}`)
    if (size > this.maxBlobBytes) throw new BlobTooLargeError(size, this.maxBlobBytes)
    const tmp = join(this.tmpDir, `${sha256}.${randomBytes(6).toString('hex')}`)
    // 0644: an input blob is hard-linked into a container's /inputs, read by an unprivileged user.
    const handle = await fs.open(tmp, 'wx', 0o644)
    return new BlobWriter(sha256, size, tmp, handle, this.path(sha256))
  }
}

export class BlobWriter {
  private readonly hash = createHash('sha256')
  private written = 0
  private done = false

  constructor(
    readonly sha256: string,
    readonly size: number,
    private readonly tmp: string,
    private readonly handle: fs.FileHandle,
    private readonly target: string,
  ) {}

  get received(): number {
    return this.written
  }

  async write(chunk: Uint8Array): Promise<void> {
    if (this.written + chunk.length > this.size) {
      await this.abort()
      throw new BlobCorruptError(this.sha256, `more than the announced ${this.size} bytes`)
    }
    this.hash.update(chunk)
    await this.handle.write(chunk)
    this.written += chunk.length
  }

  async commit(): Promise<void> {
    if (this.done) return
    this.done = true
    await this.handle.close()
    const actual = this.hash.digest('hex')
    if (this.written !== this.size || actual !== this.sha256) {
      await fs.rm(this.tmp, { force: true })
      throw new BlobCorruptError(
        this.sha256,
        this.written !== this.size
          ? `received ${this.written} of ${this.size} bytes`
          : `content hashes to ${actual}`,
      )
    }
    await fs.rename(this.tmp, this.target)
  }

  async abort(): Promise<void> {
    if (this.done) return
    this.done = true
    await this.handle.close().catch(() => {})
    await fs.rm(this.tmp, { force: true })
  }
}
