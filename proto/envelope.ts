import { decodeMessage, encodeMessage, MaxLengthError, message, streamMessage } from 'protons-runtime'
import { alloc as uint8ArrayAlloc } from 'uint8arrays/alloc'
import type { Codec, DecodeOptions } from 'protons-runtime'
import type { Uint8ArrayList } from 'uint8arraylist'

export interface Handle {
  publicKey: Uint8Array<ArrayBuffer>
  peer: string
  inbox: string
  addrs: string[]
}

export namespace Handle {
  let _codec: Codec<Handle>

  export const codec = (): Codec<Handle> => {
    if (_codec == null) {
      _codec = message<Handle>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.publicKey != null && obj.publicKey.byteLength > 0)) {
          w.uint32(10)
          w.bytes(obj.publicKey)
        }

        if ((obj.peer != null && obj.peer !== '')) {
          w.uint32(18)
          w.string(obj.peer)
        }

        if ((obj.inbox != null && obj.inbox !== '')) {
          w.uint32(26)
          w.string(obj.inbox)
        }

        if (obj.addrs != null && obj.addrs.length > 0) {
          for (const value of obj.addrs) {
            w.uint32(34)
            w.string(value)
          }
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          publicKey: uint8ArrayAlloc(0),
          peer: '',
          inbox: '',
          addrs: []
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.publicKey = reader.bytes()
              break
            }
            case 2: {
              obj.peer = reader.string()
              break
            }
            case 3: {
              obj.inbox = reader.string()
              break
            }
            case 4: {
              if (opts.limits?.addrs != null && obj.addrs.length === opts.limits.addrs) {
                throw new MaxLengthError('Decode error - repeated field "addrs" had too many elements')
              }

              obj.addrs.push(reader.string())
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        return obj
      }, function * (reader, length, prefix, opts = {}) {
        const obj = {
          addrs: 0
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              yield {
                field: `${prefix}.publicKey`,
                value: reader.bytes()
              }
              break
            }
            case 2: {
              yield {
                field: `${prefix}.peer`,
                value: reader.string()
              }
              break
            }
            case 3: {
              yield {
                field: `${prefix}.inbox`,
                value: reader.string()
              }
              break
            }
            case 4: {
              if (opts.limits?.addrs != null && obj.addrs === opts.limits.addrs) {
                throw new MaxLengthError('Streaming decode error - repeated field "addrs" had too many elements')
              }

              yield {
                field: `${prefix}.addrs[]`,
                index: obj.addrs,
                value: reader.string()
              }

              obj.addrs++

              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }
      })
    }

    return _codec
  }

  export interface HandlePublicKeyFieldEvent {
    field: '$.publicKey'
    value: Uint8Array<ArrayBuffer>
  }

  export interface HandlePeerFieldEvent {
    field: '$.peer'
    value: string
  }

  export interface HandleInboxFieldEvent {
    field: '$.inbox'
    value: string
  }

  export interface HandleAddrsFieldEvent {
    field: '$.addrs[]'
    index: number
    value: string
  }

  export function encode (obj: Partial<Handle>): Uint8Array<ArrayBuffer> {
    return encodeMessage(obj, Handle.codec())
  }

  export function decode (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<Handle>): Handle {
    return decodeMessage(buf, Handle.codec(), opts)
  }

  export function stream (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<Handle>): Generator<HandlePublicKeyFieldEvent | HandlePeerFieldEvent | HandleInboxFieldEvent | HandleAddrsFieldEvent> {
    return streamMessage(buf, Handle.codec(), opts)
  }
}

export interface Envelope {
  version: number
  sender?: Handle
  toPeer: string
  toInbox: string
  topic: string
  behaviour: string
  nonce: Uint8Array<ArrayBuffer>
  issuedAt: bigint
  expiresAt: bigint
  replyTo?: Handle
  payload: Uint8Array<ArrayBuffer>
  signature: Uint8Array<ArrayBuffer>
}

export namespace Envelope {
  let _codec: Codec<Envelope>

  export const codec = (): Codec<Envelope> => {
    if (_codec == null) {
      _codec = message<Envelope>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.version != null && obj.version !== 0)) {
          w.uint32(8)
          w.uint32(obj.version)
        }

        if (obj.sender != null) {
          w.uint32(18)
          Handle.codec().encode(obj.sender, w)
        }

        if ((obj.toPeer != null && obj.toPeer !== '')) {
          w.uint32(26)
          w.string(obj.toPeer)
        }

        if ((obj.toInbox != null && obj.toInbox !== '')) {
          w.uint32(34)
          w.string(obj.toInbox)
        }

        if ((obj.topic != null && obj.topic !== '')) {
          w.uint32(42)
          w.string(obj.topic)
        }

        if ((obj.behaviour != null && obj.behaviour !== '')) {
          w.uint32(50)
          w.string(obj.behaviour)
        }

        if ((obj.nonce != null && obj.nonce.byteLength > 0)) {
          w.uint32(58)
          w.bytes(obj.nonce)
        }

        if ((obj.issuedAt != null && obj.issuedAt !== 0n)) {
          w.uint32(64)
          w.uint64(obj.issuedAt)
        }

        if ((obj.expiresAt != null && obj.expiresAt !== 0n)) {
          w.uint32(72)
          w.uint64(obj.expiresAt)
        }

        if (obj.replyTo != null) {
          w.uint32(82)
          Handle.codec().encode(obj.replyTo, w)
        }

        if ((obj.payload != null && obj.payload.byteLength > 0)) {
          w.uint32(90)
          w.bytes(obj.payload)
        }

        if ((obj.signature != null && obj.signature.byteLength > 0)) {
          w.uint32(98)
          w.bytes(obj.signature)
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          version: 0,
          toPeer: '',
          toInbox: '',
          topic: '',
          behaviour: '',
          nonce: uint8ArrayAlloc(0),
          issuedAt: 0n,
          expiresAt: 0n,
          payload: uint8ArrayAlloc(0),
          signature: uint8ArrayAlloc(0)
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.version = reader.uint32()
              break
            }
            case 2: {
              obj.sender = Handle.codec().decode(reader, reader.uint32(), {
                limits: opts.limits?.sender
              })
              break
            }
            case 3: {
              obj.toPeer = reader.string()
              break
            }
            case 4: {
              obj.toInbox = reader.string()
              break
            }
            case 5: {
              obj.topic = reader.string()
              break
            }
            case 6: {
              obj.behaviour = reader.string()
              break
            }
            case 7: {
              obj.nonce = reader.bytes()
              break
            }
            case 8: {
              obj.issuedAt = reader.uint64()
              break
            }
            case 9: {
              obj.expiresAt = reader.uint64()
              break
            }
            case 10: {
              obj.replyTo = Handle.codec().decode(reader, reader.uint32(), {
                limits: opts.limits?.replyTo
              })
              break
            }
            case 11: {
              obj.payload = reader.bytes()
              break
            }
            case 12: {
              obj.signature = reader.bytes()
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        return obj
      }, function * (reader, length, prefix, opts = {}) {
        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              yield {
                field: `${prefix}.version`,
                value: reader.uint32()
              }
              break
            }
            case 2: {
              yield * Handle.codec().stream(reader, reader.uint32(), `${prefix}.sender`, {
                limits: opts.limits?.sender
              })

              break
            }
            case 3: {
              yield {
                field: `${prefix}.toPeer`,
                value: reader.string()
              }
              break
            }
            case 4: {
              yield {
                field: `${prefix}.toInbox`,
                value: reader.string()
              }
              break
            }
            case 5: {
              yield {
                field: `${prefix}.topic`,
                value: reader.string()
              }
              break
            }
            case 6: {
              yield {
                field: `${prefix}.behaviour`,
                value: reader.string()
              }
              break
            }
            case 7: {
              yield {
                field: `${prefix}.nonce`,
                value: reader.bytes()
              }
              break
            }
            case 8: {
              yield {
                field: `${prefix}.issuedAt`,
                value: reader.uint64()
              }
              break
            }
            case 9: {
              yield {
                field: `${prefix}.expiresAt`,
                value: reader.uint64()
              }
              break
            }
            case 10: {
              yield * Handle.codec().stream(reader, reader.uint32(), `${prefix}.replyTo`, {
                limits: opts.limits?.replyTo
              })

              break
            }
            case 11: {
              yield {
                field: `${prefix}.payload`,
                value: reader.bytes()
              }
              break
            }
            case 12: {
              yield {
                field: `${prefix}.signature`,
                value: reader.bytes()
              }
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }
      })
    }

    return _codec
  }

  export interface EnvelopeVersionFieldEvent {
    field: '$.version'
    value: number
  }

  export interface EnvelopeSenderPublicKeyFieldEvent {
    field: '$.sender.publicKey'
    value: Uint8Array<ArrayBuffer>
  }

  export interface EnvelopeSenderPeerFieldEvent {
    field: '$.sender.peer'
    value: string
  }

  export interface EnvelopeSenderInboxFieldEvent {
    field: '$.sender.inbox'
    value: string
  }

  export interface EnvelopeSenderAddrsFieldEvent {
    field: '$.sender.addrs[]'
    index: number
    value: string
  }

  export interface EnvelopeToPeerFieldEvent {
    field: '$.toPeer'
    value: string
  }

  export interface EnvelopeToInboxFieldEvent {
    field: '$.toInbox'
    value: string
  }

  export interface EnvelopeTopicFieldEvent {
    field: '$.topic'
    value: string
  }

  export interface EnvelopeBehaviourFieldEvent {
    field: '$.behaviour'
    value: string
  }

  export interface EnvelopeNonceFieldEvent {
    field: '$.nonce'
    value: Uint8Array<ArrayBuffer>
  }

  export interface EnvelopeIssuedAtFieldEvent {
    field: '$.issuedAt'
    value: bigint
  }

  export interface EnvelopeExpiresAtFieldEvent {
    field: '$.expiresAt'
    value: bigint
  }

  export interface EnvelopeReplyToPublicKeyFieldEvent {
    field: '$.replyTo.publicKey'
    value: Uint8Array<ArrayBuffer>
  }

  export interface EnvelopeReplyToPeerFieldEvent {
    field: '$.replyTo.peer'
    value: string
  }

  export interface EnvelopeReplyToInboxFieldEvent {
    field: '$.replyTo.inbox'
    value: string
  }

  export interface EnvelopeReplyToAddrsFieldEvent {
    field: '$.replyTo.addrs[]'
    index: number
    value: string
  }

  export interface EnvelopePayloadFieldEvent {
    field: '$.payload'
    value: Uint8Array<ArrayBuffer>
  }

  export interface EnvelopeSignatureFieldEvent {
    field: '$.signature'
    value: Uint8Array<ArrayBuffer>
  }

  export function encode (obj: Partial<Envelope>): Uint8Array<ArrayBuffer> {
    return encodeMessage(obj, Envelope.codec())
  }

  export function decode (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<Envelope>): Envelope {
    return decodeMessage(buf, Envelope.codec(), opts)
  }

  export function stream (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<Envelope>): Generator<EnvelopeVersionFieldEvent | EnvelopeSenderPublicKeyFieldEvent | EnvelopeSenderPeerFieldEvent | EnvelopeSenderInboxFieldEvent | EnvelopeSenderAddrsFieldEvent | EnvelopeToPeerFieldEvent | EnvelopeToInboxFieldEvent | EnvelopeTopicFieldEvent | EnvelopeBehaviourFieldEvent | EnvelopeNonceFieldEvent | EnvelopeIssuedAtFieldEvent | EnvelopeExpiresAtFieldEvent | EnvelopeReplyToPublicKeyFieldEvent | EnvelopeReplyToPeerFieldEvent | EnvelopeReplyToInboxFieldEvent | EnvelopeReplyToAddrsFieldEvent | EnvelopePayloadFieldEvent | EnvelopeSignatureFieldEvent> {
    return streamMessage(buf, Envelope.codec(), opts)
  }
}

export interface ErrorReply {
  code: string
  message: string
  data?: Uint8Array<ArrayBuffer>
}

export namespace ErrorReply {
  let _codec: Codec<ErrorReply>

  export const codec = (): Codec<ErrorReply> => {
    if (_codec == null) {
      _codec = message<ErrorReply>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.code != null && obj.code !== '')) {
          w.uint32(10)
          w.string(obj.code)
        }

        if ((obj.message != null && obj.message !== '')) {
          w.uint32(18)
          w.string(obj.message)
        }

        if (obj.data != null) {
          w.uint32(26)
          w.bytes(obj.data)
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          code: '',
          message: ''
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.code = reader.string()
              break
            }
            case 2: {
              obj.message = reader.string()
              break
            }
            case 3: {
              obj.data = reader.bytes()
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        return obj
      }, function * (reader, length, prefix, opts = {}) {
        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              yield {
                field: `${prefix}.code`,
                value: reader.string()
              }
              break
            }
            case 2: {
              yield {
                field: `${prefix}.message`,
                value: reader.string()
              }
              break
            }
            case 3: {
              yield {
                field: `${prefix}.data`,
                value: reader.bytes()
              }
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }
      })
    }

    return _codec
  }

  export interface ErrorReplyCodeFieldEvent {
    field: '$.code'
    value: string
  }

  export interface ErrorReplyMessageFieldEvent {
    field: '$.message'
    value: string
  }

  export interface ErrorReplyDataFieldEvent {
    field: '$.data'
    value: Uint8Array<ArrayBuffer>
  }

  export function encode (obj: Partial<ErrorReply>): Uint8Array<ArrayBuffer> {
    return encodeMessage(obj, ErrorReply.codec())
  }

  export function decode (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<ErrorReply>): ErrorReply {
    return decodeMessage(buf, ErrorReply.codec(), opts)
  }

  export function stream (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<ErrorReply>): Generator<ErrorReplyCodeFieldEvent | ErrorReplyMessageFieldEvent | ErrorReplyDataFieldEvent> {
    return streamMessage(buf, ErrorReply.codec(), opts)
  }
}
