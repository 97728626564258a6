/**
 * The data plane over the actor network (specs/data-plane.md): the `blobs` actor that serves
 * granted blobs, fetching from a peer's `blobs` actor, and the log forwarder that streams an
 * allocation's output to the requester while it runs.
 */
import type { Clock } from '../../actors/clock.js'
import type { Handle } from '../../actors/envelope.js'
import type { KeyPair } from '../../actors/identity.js'
import type { Actor } from '../../actors/actor.js'
import type { ActorSystem } from '../../actors/system.js'
import { W } from '../protocol/behaviours.js'
import { handleOf, INBOX } from '../protocol/handles.js'
import type { JobLog } from '../protocol/messages.js'
import type { BlobGrant } from '../contracts/model.js'
import type { BlobRef, BlobService } from './service.js'

/** Starts the node's `blobs` actor: answers `/dms/blob/get` for the blobs granted to the asker. */
export function startBlobActor(system: ActorSystem, key: KeyPair, blobs: BlobService): Actor {
  return system.spawn(INBOX.blobs, key).on(W.blobGet, (m) => blobs.serve(m.peer, m.payload))
}

/** The `blobs` actor of `peer` (it runs with the node key, so its public key is the peer's). */
export function blobsHandle(peer: string, addrs: string[]): Handle {
  return handleOf(peer, INBOX.blobs, addrs)
}

/**
 * Fetches the blobs of `refs` the local store lacks from `from`, chunk by chunk; with `grant`, each
 * request carries that delegated grant (a fetch from a node that granted the blobs to its owner).
 */
export function fetchBlobs(
  actor: Actor,
  blobs: BlobService,
  from: Handle,
  refs: BlobRef[],
  opts: { signal?: AbortSignal; timeoutMs?: number; grant?: BlobGrant } = {},
): Promise<string[]> {
  return blobs.fetchMissing(refs, (req) =>
    actor.request(from, W.blobGet, opts.grant !== undefined ? { ...req, grant: opts.grant } : req, {
      timeoutMs: opts.timeoutMs ?? 15_000,
      signal: opts.signal,
    }),
  )
}

/**
 * Streams one allocation's output to the requester: chunks are batched (every `flushMs`, or at
 * `batchBytes`) into numbered `/dms/job/log` messages, and forwarding stops at `maxBytes` per
 * stream (the run's own capture keeps going). Delivery is best effort: the full, capped output
 * also travels in the result.
 */
export class LogForwarder {
  private seq = 0
  private readonly pending: Record<'stdout' | 'stderr', string> = { stdout: '', stderr: '' }
  private readonly sent: Record<'stdout' | 'stderr', number> = { stdout: 0, stderr: 0 }
  private timer: unknown

  constructor(
    private readonly send: (log: JobLog) => Promise<void>,
    private readonly clock: Clock,
    private readonly ids: { jobId: string; allocationId: string },
    private readonly opts: { flushMs?: number; batchBytes?: number; maxBytes?: number } = {},
  ) {}

  push(stream: 'stdout' | 'stderr', chunk: string): void {
    const room = (this.opts.maxBytes ?? 256 * 1024) - this.sent[stream] - this.pending[stream].length
    if (room <= 0) return
    this.pending[stream] += chunk.length > room ? chunk.slice(0, room) : chunk
    if (this.pending[stream].length >= (this.opts.batchBytes ?? 64 * 1024)) this.flush()
    else this.timer ??= this.clock.setTimeout(() => this.flush(), this.opts.flushMs ?? 100)
  }

  flush(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer)
    this.timer = undefined
    for (const stream of ['stdout', 'stderr'] as const) {
      const data = this.pending[stream]
      if (data === '') continue
      this.pending[stream] = ''
      this.sent[stream] += data.length
      void this.send({ ...this.ids, stream, seq: this.seq++, data }).catch(() => {})
    }
  }
}
