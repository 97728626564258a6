/**
 * Uploads into the blob store as the REST API takes them (`PUT /v1/blobs`, specs/data-plane.md,
 * "REST"): each streamed to a temp file while hashed (`BlobStore.putStream`), abandoned when its
 * client sends nothing for `idleMs`, and all of them together holding at most `maxInFlightBytes`
 * of temp files. Either way the upload's temp file is removed. Before: a client that stopped
 * sending held its temp file (up to 1 GiB each, any number of them) until it hung up (issue 29).
 */
import type { Clock } from '../../actors/clock.js'
import { DmsError } from '../../actors/errors.js'
import type { BlobStore } from './store.js'

/** No byte of an upload came for the idle time: the upload is dropped (HTTP 408). */
export class UploadStalledError extends DmsError {
  readonly statusCode = 408
  constructor(
    readonly idleMs: number,
    readonly received: number,
  ) {
    super(
      'UPLOAD_STALLED',
      `no bytes for ${idleMs} ms after ${received} bytes: the upload was dropped, send it again`,
    )
  }
}

/** The uploads in progress already hold the node's budget of temp bytes (HTTP 503). */
export class UploadsBusyError extends DmsError {
  readonly statusCode = 503
  constructor(
    readonly inFlight: number,
    readonly limit: number,
  ) {
    super(
      'UPLOADS_BUSY',
      `uploads in progress would hold ${inFlight} bytes, over this node's ${limit}: send it again once they end`,
    )
  }
}

export interface BlobUploadsInit {
  /** An upload that receives no byte for this long is dropped. @default 30000 */
  idleMs?: number
  /** Temp bytes all uploads in progress may hold together. @default 2 GiB */
  maxInFlightBytes?: number
}

export const DEFAULT_UPLOAD_IDLE_MS = 30_000
export const DEFAULT_UPLOADS_IN_FLIGHT_BYTES = 2 * 1024 * 1024 * 1024

export class BlobUploads {
  readonly idleMs: number
  readonly maxInFlightBytes: number
  private held = 0

  constructor(
    private readonly c: { store: BlobStore; clock: Pick<Clock, 'setTimeout' | 'clearTimeout'> },
    init: BlobUploadsInit = {},
  ) {
    this.idleMs = init.idleMs ?? DEFAULT_UPLOAD_IDLE_MS
    this.maxInFlightBytes = init.maxInFlightBytes ?? DEFAULT_UPLOADS_IN_FLIGHT_BYTES
  }

  /** Bytes the uploads in progress hold in temp files. */
  get bytesInFlight(): number {
    return this.held
  }

  /**
   * Stores `body` under its sha256. `declared` (the request's content-length) is refused at once
   * when it would not fit beside the uploads in progress. Throws UploadStalledError,
   * UploadsBusyError, or the store's BlobTooLargeError; each keeps nothing.
   */
  async put(body: AsyncIterable<Uint8Array>, declared?: number): Promise<{ sha256: string; size: number }> {
    if (declared !== undefined && this.held + declared > this.maxInFlightBytes)
      throw new UploadsBusyError(this.held + declared, this.maxInFlightBytes)
    let mine = 0
    const take = (n: number) => {
      mine += n
      this.held += n
      if (this.held > this.maxInFlightBytes) throw new UploadsBusyError(this.held, this.maxInFlightBytes)
    }
    try {
      return await this.c.store.putStream(this.paced(body, take, () => mine))
    } finally {
      this.held -= mine
    }
  }

  /** `body`, failing when a chunk does not come within `idleMs`, each chunk counted by `take`. */
  private async *paced(
    body: AsyncIterable<Uint8Array>,
    take: (n: number) => void,
    received: () => number,
  ): AsyncGenerator<Uint8Array> {
    const it = body[Symbol.asyncIterator]()
    for (;;) {
      const next = await this.within(it.next(), received)
      if (next.done === true) return
      take(next.value.length)
      yield next.value
    }
  }

  private within<T>(p: Promise<T>, received: () => number): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timer = this.c.clock.setTimeout(
        () => reject(new UploadStalledError(this.idleMs, received())),
        this.idleMs,
      )
      p.then(resolve, reject).finally(() => this.c.clock.clearTimeout(timer))
    })
  }
}
