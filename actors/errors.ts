/** Errors raised by the actor runtime. Callers branch on `name`; `code` is stable across the wire. */

export class ActorError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message)
  }
}

export class RequestTimeoutError extends ActorError {
  override name = 'RequestTimeoutError'
  constructor(behaviour: string, ms: number) {
    super(`no reply to ${behaviour} within ${ms} ms`, 'REQUEST_TIMEOUT')
  }
}

/** The receiver's behaviour threw; carries its code and message, never its stack. */
export class RemoteError extends ActorError {
  override name = 'RemoteError'
  constructor(
    code: string,
    message: string,
    readonly data?: unknown,
  ) {
    super(message, code)
  }
}

export class UnreachableError extends ActorError {
  override name = 'UnreachableError'
  constructor(peer: string, cause: unknown) {
    super(
      `cannot reach peer ${peer}: ${cause instanceof Error ? cause.message : String(cause)}`,
      'UNREACHABLE',
    )
  }
}

export class NoSuchInboxError extends ActorError {
  override name = 'NoSuchInboxError'
  constructor(inbox: string) {
    super(`no inbox ${inbox} on this node`, 'NO_SUCH_INBOX')
  }
}

/** Thrown by behaviours to refuse a request with a stable code the caller can act on. */
export class RefusedError extends ActorError {
  override name = 'RefusedError'
  constructor(
    code: string,
    message: string,
    readonly data?: unknown,
  ) {
    super(message, code)
  }
}
