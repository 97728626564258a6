/**
 * The data plane over the actor network (specs/data-plane.md): the `blobs` actor that serves
 * granted blobs, fetching from a peer's `blobs` actor, and the log forwarder that streams an
 * allocation's output to the requester while it runs.
 */
import type { Clock } from '../../actors/clock.js'
import { DmsError } from '../../actors/errors.js'
import type { Handle } from '../../actors/envelope.js'
import type { KeyPair } from '../../actors/identity.js'
import type { Actor } from '../../actors/actor.js'
import type { ActorSystem } from '../../actors/system.js'
import { W } from '../protocol/behaviours.js'
import { handleOf, INBOX } from '../protocol/handles.js'
import type { JobLog } from '../protocol/messages.js'
import type { BlobGrant } from '../contracts/model.js'
import type { BlobRef, BlobService } from './service.js'

/**
 * Starts the node's `blobs` actor: answers `/dms/blob/get` for the blobs granted to the asker, and
 * `/dms/blob/release` from a grantee that no longer needs a blob.
 */
export function startBlobActor(system: ActorSystem, key: KeyPair, blobs: BlobService): Actor {
  return system
    .spawn(INBOX.blobs, key)
    .on(W.blobGet, (m) => blobs.serve(m.peer, m.payload))
    .on(W.blobRelease, (m) => blobs.release(m.peer, m.payload.sha256, m.payload.jobId))
}

/** The `blobs` actor of `peer` (it runs with the node key, so its public key is the peer's). */
export function blobsHandle(peer: string, addrs: string[]): Handle {
  return handleOf(peer, INBOX.blobs, addrs)
}

/**
 * The slowest transfer a fetch accepts: it must end within `graceMs` plus the time its bytes take
 * at `minBytesPerSecond` (specs/data-plane.md, "Transfer deadline"). A peer that answers every
 * chunk just before the per-chunk timeout cannot hold a fetch open for longer than that.
 */
export interface TransferPace {
  minBytesPerSecond: number
  graceMs: number
}

/** @default 256 KiB/s after a 30 s grace: a 1 GiB archive gets about 71 minutes. */
export const DEFAULT_TRANSFER_PACE: TransferPace = { minBytesPerSecond: 256 * 1024, graceMs: 30_000 }

/** How long a transfer of `bytes` may take at `pace`, in ms. */
export function transferBudgetMs(bytes: number, pace: TransferPace): number {
  return pace.graceMs + Math.ceil((bytes * 1000) / pace.minBytesPerSecond)
}

/** A fetch not done by its deadline: the peer sends slower than the minimum rate. */
export class TransferTooSlowError extends DmsError {
  constructor(
    readonly bytes: number,
    readonly budgetMs: number,
  ) {
    super('TRANSFER_TOO_SLOW', `${bytes} bytes not received within ${budgetMs} ms (the minimum rate)`)
  }
}

export interface FetchOptions {
  signal?: AbortSignal
  /** Per-chunk request timeout. @default 15000 */
  timeoutMs?: number
  /**
   * The whole fetch must end by `at` (on `clock`); past it the chunk in flight is abandoned and
   * the fetch rejects with TransferTooSlowError, the partial blob dropped.
   */
  deadline?: { at: number; clock: Clock; budgetMs: number }
  /** A delegated grant carried by each request (a fetch from a node that granted the blobs to its owner). */
  grant?: BlobGrant
}

/**
 * Fetches the blobs of `refs` the local store lacks from `from`, chunk by chunk; with `grant`, each
 * request carries that delegated grant.
 */
export async function fetchBlobs(
  actor: Actor,
  blobs: BlobService,
  from: Handle,
  refs: BlobRef[],
  opts: FetchOptions = {},
): Promise<string[]> {
  const { deadline } = opts
  const late = new AbortController()
  const timer =
    deadline === undefined
      ? undefined
      : deadline.clock.setTimeout(
          () =>
            late.abort(
              new TransferTooSlowError(
                refs.reduce((n, r) => n + r.size, 0),
                deadline.budgetMs,
              ),
            ),
          Math.max(0, deadline.at - deadline.clock.now()),
        )
  const signal = opts.signal === undefined ? late.signal : AbortSignal.any([opts.signal, late.signal])
  try {
    return await blobs.fetchMissing(refs, (req) => {
      signal.throwIfAborted()
      const withGrant = opts.grant !== undefined ? { ...req, grant: opts.grant } : req
      return actor.request(from, W.blobGet, withGrant, { timeoutMs: opts.timeoutMs ?? 15_000, signal })
    })
  } finally {
    if (timer !== undefined) deadline?.clock.clearTimeout(timer)
  }
}

/**
 * Streams one allocation's output to the requester: chunks are batched (every `flushMs`, or at
 * `batchBytes`) into numbered `/dms/job/log` messages, and forwarding stops at `maxBytes` per
 * stream (the run's own capture keeps going). Delivery is best effort: the full, capped output
 * also travels in the result.
 */
export class LogForwarder {
  private seq = 0
  /** Pending and sent text per stream, and per member of a pod (keyed `member\0stream`). */
  private readonly pending = new Map<string, string>()
  private readonly sent = new Map<string, number>()
  private timer: unknown

  constructor(
    private readonly send: (log: JobLog) => Promise<void>,
    private readonly clock: Clock,
    private readonly ids: { jobId: string; allocationId: string },
    private readonly opts: { flushMs?: number; batchBytes?: number; maxBytes?: number } = {},
  ) {}

  push(stream: 'stdout' | 'stderr', chunk: string, member?: string): void {
    const key = `${member ?? ''}\0${stream}`
    const pending = this.pending.get(key) ?? ''
    const room = (this.opts.maxBytes ?? 256 * 1024) - (this.sent.get(key) ?? 0) - pending.length
    if (room <= 0) return
    const next = pending + (chunk.length > room ? chunk.slice(0, room) : chunk)
    this.pending.set(key, next)
    if (next.length >= (this.opts.batchBytes ?? 64 * 1024)) this.flush()
    else this.timer ??= this.clock.setTimeout(() => this.flush(), this.opts.flushMs ?? 100)
  }

  flush(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer)
    this.timer = undefined
    for (const [key, data] of this.pending) {
      if (data === '') continue
      this.pending.set(key, '')
      this.sent.set(key, (this.sent.get(key) ?? 0) + data.length)
      const [member, stream] = key.split('\0') as [string, 'stdout' | 'stderr']
      const log: JobLog = { ...this.ids, stream, seq: this.seq++, data, ...(member !== '' ? { member } : {}) }
      void this.send(log).catch(() => {})
    }
  }
}
