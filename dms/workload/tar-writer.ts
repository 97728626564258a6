/**
 * Writes an output archive (tar.ts) straight to a file: each file's bytes are copied through one
 * reusable buffer and hashed as they pass (the file's sha256 for the manifest, the archive's
 * sha256 for its blob id), so memory stays at one buffer whatever the outputs weigh.
 */
import { createHash } from 'node:crypto'
import { promises as fs } from 'node:fs'
import { END_OF_ARCHIVE, fileHeader, paddingOf, TarFormatError } from './tar.js'

/** Size of the copy buffer. */
const COPY_BYTES = 1024 * 1024

export interface WrittenArchive {
  /** The archive file. */
  file: string
  /** sha256 of the whole archive, hex: its blob id. */
  sha256: string
  size: number
}

export class TarFileWriter {
  private readonly hash = createHash('sha256')
  private readonly buf = Buffer.allocUnsafe(COPY_BYTES)
  private size = 0
  private previous: string | undefined
  private done = false

  private constructor(
    readonly file: string,
    private readonly handle: fs.FileHandle,
  ) {}

  /** Creates `file` (which must not exist). */
  static async create(file: string): Promise<TarFileWriter> {
    return new TarFileWriter(file, await fs.open(file, 'wx', 0o644))
  }

  /**
   * Appends a regular file of `size` bytes read from `source` (from its start) and returns the
   * sha256 of its content. Paths must come in sorted order (plain `<`), each once.
   *
   * A source shorter than `size` (it shrank while being read) is padded with zero bytes, so the
   * archive and the returned hash still agree.
   */
  async addFile(path: string, size: number, source: fs.FileHandle): Promise<string> {
    if (this.previous !== undefined && !(this.previous < path)) {
      throw new TarFormatError(
        path === this.previous ? `duplicate path ${path}` : `path ${path} is out of order`,
      )
    }
    this.previous = path
    await this.write(fileHeader(path, size))
    const content = createHash('sha256')
    let done = 0
    let ended = false
    while (done < size) {
      const want = Math.min(this.buf.length, size - done)
      let n = ended ? 0 : (await source.read(this.buf, 0, want, done)).bytesRead
      if (n === 0) {
        ended = true
        this.buf.fill(0, 0, want)
        n = want
      }
      const chunk = this.buf.subarray(0, n)
      content.update(chunk)
      await this.write(chunk)
      done += n
    }
    await this.write(Buffer.alloc(paddingOf(size)))
    return content.digest('hex')
  }

  /** Writes the end marker and closes the file. */
  async finish(): Promise<WrittenArchive> {
    await this.write(END_OF_ARCHIVE)
    this.done = true
    await this.handle.close()
    return { file: this.file, sha256: this.hash.digest('hex'), size: this.size }
  }

  /** Closes and removes the file. */
  async abort(): Promise<void> {
    if (!this.done) {
      this.done = true
      await this.handle.close().catch(() => {})
    }
    await fs.rm(this.file, { force: true })
  }

  private async write(chunk: Buffer): Promise<void> {
    if (chunk.length === 0) return
    this.hash.update(chunk)
    let at = 0
    while (at < chunk.length) at += (await this.handle.write(chunk, at, chunk.length - at)).bytesWritten
    this.size += chunk.length
  }
}
