/**
 * Bytes held for unfinished inbound frames, per connection and in total. A peer that announces a
 * large frame and sends it slowly (or never finishes it) holds memory: the budget caps how much
 * one connection and all of them together may hold at once. Spec: specs/protocol.md, "Transport".
 */
export interface ReadBudgetInit {
  /** Unfinished-frame bytes one connection may hold, over all its streams. */
  perConnection: number
  /** Unfinished-frame bytes all connections together may hold. */
  total: number
}

export class ReadBudget {
  private readonly byConnection = new Map<string, Map<string, number>>()
  private readonly connectionSums = new Map<string, number>()
  private sum = 0

  constructor(readonly limits: ReadBudgetInit) {}

  /** Bytes held by all connections. */
  get total(): number {
    return this.sum
  }

  /** Bytes held by one connection's streams. */
  connectionBytes(connection: string): number {
    return this.connectionSums.get(connection) ?? 0
  }

  /**
   * Records that `stream` of `connection` now holds `bytes`. Returns false, and records nothing,
   * when that would take the connection or the total over its limit.
   */
  set(connection: string, stream: string, bytes: number): boolean {
    const streams = this.byConnection.get(connection)
    const before = streams?.get(stream) ?? 0
    const delta = bytes - before
    const conn = this.connectionBytes(connection) + delta
    if (delta > 0 && (conn > this.limits.perConnection || this.sum + delta > this.limits.total)) return false
    if (bytes === 0) {
      streams?.delete(stream)
      if (streams?.size === 0) this.byConnection.delete(connection)
    } else if (streams === undefined) this.byConnection.set(connection, new Map([[stream, bytes]]))
    else streams.set(stream, bytes)
    if (conn === 0) this.connectionSums.delete(connection)
    else this.connectionSums.set(connection, conn)
    this.sum += delta
    return true
  }

  /** Forgets what `stream` held (it ended). */
  release(connection: string, stream: string): void {
    this.set(connection, stream, 0)
  }
}
