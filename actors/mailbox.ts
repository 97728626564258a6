/**
 * A bounded FIFO with an explicit overflow policy. Items are processed one at a time by `handler`
 * (an actor handles one message at a time); `drop-newest` refuses new items when full, `drop-oldest`
 * evicts the head. Every drop is counted.
 */
export type OverflowPolicy = 'drop-newest' | 'drop-oldest'

export interface MailboxInit {
  /** @default 1024 */
  capacity?: number
  /** @default 'drop-newest' */
  overflow?: OverflowPolicy
}

export interface MailboxStats {
  length: number
  accepted: number
  dropped: number
  processed: number
  failed: number
}

export class Mailbox<T> {
  private readonly queue: T[] = []
  private readonly capacity: number
  private readonly overflow: OverflowPolicy
  private running = false
  private closed = false
  private idleWaiters: Array<() => void> = []
  readonly stats: MailboxStats = { length: 0, accepted: 0, dropped: 0, processed: 0, failed: 0 }

  constructor(
    private readonly handler: (item: T) => Promise<void>,
    private readonly onError: (err: unknown, item: T) => void,
    init: MailboxInit = {},
  ) {
    this.capacity = init.capacity ?? 1024
    this.overflow = init.overflow ?? 'drop-newest'
  }

  /** Enqueues; returns false when the item (or, for drop-oldest, an older one) was dropped. */
  push(item: T): boolean {
    if (this.closed) return false
    let ok = true
    if (this.queue.length >= this.capacity) {
      this.stats.dropped++
      if (this.overflow === 'drop-newest') return false
      this.queue.shift()
      ok = false
    }
    this.queue.push(item)
    this.stats.accepted++
    this.stats.length = this.queue.length
    if (!this.running) void this.drain()
    return ok
  }

  /** Resolves when the queue is empty and nothing is being handled. */
  idle(): Promise<void> {
    if (!this.running && this.queue.length === 0) return Promise.resolve()
    return new Promise((resolve) => this.idleWaiters.push(resolve))
  }

  close(): void {
    this.closed = true
    this.queue.length = 0
    this.stats.length = 0
  }

  private async drain(): Promise<void> {
    this.running = true
    while (this.queue.length > 0) {
      const item = this.queue.shift() as T
      this.stats.length = this.queue.length
      try {
        await this.handler(item)
        this.stats.processed++
      } catch (err) {
        this.stats.failed++
        this.onError(err, item)
      }
    }
    this.running = false
    const waiters = this.idleWaiters
    this.idleWaiters = []
    for (const w of waiters) w()
  }
}
