/**
 * The one error base, and the errors raised by the actor runtime. Callers branch on `name` (the
 * class's name) or, across the wire and the REST API, on the stable `code` (`isCode`).
 */

/**
 * Base of every DMS error: `name` is the class's name, `code` a stable UPPER_SNAKE reason a
 * caller (or a remote peer, or a REST client) can act on, `data` what is needed to act.
 */
export class DmsError<Data = unknown> extends Error {
  readonly code: string
  readonly data?: Data

  constructor(code: string, message: string, data?: Data, options?: ErrorOptions) {
    super(message, options)
    this.name = new.target.name
    this.code = code
    if (data !== undefined) this.data = data
  }
}

/** The stable code of any error that has one (ours, a RemoteError from a peer, Node's), else `fallback`. */
export function codeOf(err: unknown, fallback = 'INTERNAL'): string {
  const code = (err as { code?: unknown } | null | undefined)?.code
  return typeof code === 'string' ? code : fallback
}

/** Whether `err` carries the code `code` (or one of `code`). */
export function isCode(err: unknown, code: string | readonly string[]): boolean {
  const c = codeOf(err, '')
  return c !== '' && (typeof code === 'string' ? c === code : code.includes(c))
}

export class RequestTimeoutError extends DmsError {
  constructor(behaviour: string, ms: number) {
    super('REQUEST_TIMEOUT', `no reply to ${behaviour} within ${ms} ms`)
  }
}

/** The receiver's behaviour threw; carries its code and message, never its stack. */
export class RemoteError extends DmsError {
  constructor(code: string, message: string, data?: unknown) {
    super(code, message, data)
  }
}

export class UnreachableError extends DmsError {
  constructor(peer: string, cause: unknown) {
    super(
      'UNREACHABLE',
      `cannot reach peer ${peer}: ${cause instanceof Error ? cause.message : String(cause)}`,
    )
  }
}

/** Thrown by behaviours to refuse a request with a stable code the caller can act on. */
export class RefusedError extends DmsError {
  constructor(code: string, message: string, data?: unknown) {
    super(code, message, data)
  }
}
