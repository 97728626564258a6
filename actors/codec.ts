/**
 * Payload codecs by behaviour name. The envelope carries `payload` bytes; what they mean is
 * decided by the behaviour: a registered behaviour encodes its request and its reply with their
 * codecs (protobuf, in DMS: dms/protocol/behaviours.ts), an unregistered one falls back to JSON (tests, ad hoc
 * tools). `<name>#error` replies always use ErrorReply (proto/envelope.proto).
 */
import { ErrorReply } from '../proto/envelope.js'
import { ErrorReplyWire } from '../proto/envelope.wire.js'
import { checkWire } from './wire.js'

export interface PayloadCodec<T> {
  encode(value: T): Uint8Array
  /** Throws on bytes that are not a valid T (the receiver counts `bad_payload`). */
  decode(bytes: Uint8Array): T
}

export interface BehaviourCodecs<Req = unknown, Rep = unknown> {
  request: PayloadCodec<Req>
  /** For request/reply behaviours. @default empty payload, decoded as null */
  reply?: PayloadCodec<Rep>
}

/** The fields of an error reply, as a behaviour's thrown error gives them. */
export interface ErrorPayload {
  code: string
  message: string
  data?: unknown
}

export const REPLY_SUFFIX = '#reply'
export const ERROR_SUFFIX = '#error'

const enc = new TextEncoder()
const dec = new TextDecoder('utf-8', { fatal: true })

/** JSON, for behaviours without a registered codec. Empty bytes are null. */
export const jsonCodec: PayloadCodec<unknown> = {
  encode: (v) => enc.encode(JSON.stringify(v ?? null)),
  decode: (b) => (b.length === 0 ? null : (JSON.parse(dec.decode(b)) as unknown)),
}

/** No payload (replies of behaviours that have none). */
export const emptyCodec: PayloadCodec<null> = {
  encode: () => new Uint8Array(0),
  decode: () => null,
}

/** Bounds of an error reply's fields (characters, characters, bytes): checked before any use. */
export const ERROR_LIMITS = { code: 64, message: 4096, data: 16 * 1024 } as const

export const errorCodec: PayloadCodec<ErrorPayload> = {
  encode: (e) =>
    ErrorReply.encode({
      code: e.code,
      // Clipped, so a long message of ours is not refused by the receiver.
      message: e.message.length > ERROR_LIMITS.message ? e.message.slice(0, ERROR_LIMITS.message) : e.message,
      data: e.data === undefined ? undefined : enc.encode(JSON.stringify(e.data)),
    }),
  decode: (b) => {
    checkWire(b, ErrorReplyWire)
    const r = ErrorReply.decode(b)
    if (r.code.length > ERROR_LIMITS.code) throw new Error(`error code over ${ERROR_LIMITS.code} characters`)
    if (r.message.length > ERROR_LIMITS.message)
      throw new Error(`error message over ${ERROR_LIMITS.message} characters`)
    if ((r.data?.length ?? 0) > ERROR_LIMITS.data)
      throw new Error(`error data over ${ERROR_LIMITS.data} bytes`)
    return {
      code: r.code === '' ? 'REMOTE_ERROR' : r.code,
      message: r.message,
      data: r.data === undefined ? undefined : (JSON.parse(dec.decode(r.data)) as unknown),
    }
  },
}

/**
 * A behaviour with its payload types and codecs: the typed handle for `Actor.on/send/request/
 * publish`. `Rep` is the reply of a request/reply behaviour (`void` for one-way ones).
 */
export interface BehaviourDef<Req, Rep = void> {
  readonly name: string
  readonly codecs: BehaviourCodecs<Req, Rep>
}

export function defineBehaviour<Req, Rep = void>(
  name: string,
  codecs: BehaviourCodecs<Req, Rep>,
): BehaviourDef<Req, Rep> {
  return { name, codecs }
}

/** Behaviour name -> codecs. Extending the protocol is one `register` call per behaviour. */
export class CodecRegistry {
  private readonly byName = new Map<string, BehaviourCodecs>()

  register<Req, Rep>(behaviour: string, codecs: BehaviourCodecs<Req, Rep>): this {
    if (behaviour.endsWith(REPLY_SUFFIX) || behaviour.endsWith(ERROR_SUFFIX))
      throw new Error(`register ${behaviour} without its #reply/#error suffix`)
    this.byName.set(behaviour, codecs)
    return this
  }

  /** Registers a typed behaviour (see defineBehaviour). */
  add(def: BehaviourDef<unknown, unknown>): this {
    return this.register(def.name, def.codecs)
  }

  has(behaviour: string): boolean {
    return this.byName.has(behaviour)
  }

  /** The codec for an envelope's behaviour, including `#reply` and `#error` names. */
  codecFor(behaviour: string): PayloadCodec<unknown> {
    if (behaviour.endsWith(ERROR_SUFFIX)) return errorCodec
    if (behaviour.endsWith(REPLY_SUFFIX)) {
      const c = this.byName.get(behaviour.slice(0, -REPLY_SUFFIX.length))
      if (c === undefined) return jsonCodec
      return c.reply ?? emptyCodec
    }
    return this.byName.get(behaviour)?.request ?? jsonCodec
  }

  encode(behaviour: string, value: unknown): Uint8Array {
    return this.codecFor(behaviour).encode(value)
  }

  decode(behaviour: string, bytes: Uint8Array): unknown {
    return this.codecFor(behaviour).decode(bytes)
  }
}
