import { randomBytes } from 'node:crypto'
import { Envelope, type Handle } from '../proto/envelope.js'
import { verifySignature, type KeyPair } from './identity.js'
import { EnvelopeWire } from '../proto/envelope.wire.js'
import { checkWire } from './wire.js'

export { Envelope, type Handle }

/**
 * The version an envelope says when its sender gives none: the runtime's own. An application
 * speaking a protocol of its own passes its number (`ActorSystemInit.version`); the signature
 * domain stays `v1` whatever the number.
 */
export const ENVELOPE_VERSION = 1
const DOMAIN = new TextEncoder().encode('dms/envelope/v1\0')

export interface EnvelopeInit {
  sender: Handle
  /** Absent for broadcasts. */
  to?: { peer: string; inbox: string }
  topic?: string
  behaviour: string
  payload: Uint8Array
  replyTo?: Handle
  issuedAt: number
  ttlMs: number
  /** The protocol version the sender speaks. @default ENVELOPE_VERSION */
  version?: number
}

function signingBytes(env: Envelope): Uint8Array {
  return withDomain(Envelope.encode({ ...env, signature: new Uint8Array(0) }))
}

function withDomain(body: Uint8Array): Uint8Array {
  const out = new Uint8Array(DOMAIN.length + body.length)
  out.set(DOMAIN, 0)
  out.set(body, DOMAIN.length)
  return out
}

/**
 * `signature` (field 12, length-delimited, 64 bytes) as protobuf writes it: the last field of
 * an envelope, so the wire bytes are the unsigned encoding followed by these 66 bytes.
 */
const SIGNATURE_FIELD = Uint8Array.of((12 << 3) | 2, 64)
const SIGNATURE_TAIL = SIGNATURE_FIELD.length + 64

/**
 * Builds and signs an envelope; returns the wire bytes: the unsigned encoding (what is signed,
 * after the domain) with the signature field appended, the same bytes as encoding the signed
 * envelope, encoded once.
 */
export function sealEnvelope(key: KeyPair, init: EnvelopeInit): Uint8Array {
  const env: Envelope = {
    version: init.version ?? ENVELOPE_VERSION,
    sender: init.sender,
    toPeer: init.to?.peer ?? '',
    toInbox: init.to?.inbox ?? '',
    topic: init.topic ?? '',
    behaviour: init.behaviour,
    nonce: randomBytes(16),
    issuedAt: BigInt(init.issuedAt),
    expiresAt: BigInt(init.issuedAt + init.ttlMs),
    replyTo: init.replyTo,
    payload: init.payload as Uint8Array<ArrayBuffer>,
    signature: new Uint8Array(0),
  }
  const body = Envelope.encode(env)
  const signature = key.sign(withDomain(body))
  if (signature.length !== 64) throw new Error(`an Ed25519 signature is 64 bytes, got ${signature.length}`)
  const out = new Uint8Array(body.length + SIGNATURE_TAIL)
  out.set(body, 0)
  out.set(SIGNATURE_FIELD, body.length)
  out.set(signature, body.length + SIGNATURE_FIELD.length)
  return out
}

/**
 * true when the envelope's signature is valid for its sender key. Given `wire`, the bytes `env`
 * was decoded from (decodeEnvelope(wire): the check is then of those bytes, so never pass others),
 * and they end with its signature field (as every sealed envelope does), the bytes before it are
 * what was signed: checked as they came, without encoding the envelope again. Otherwise the
 * envelope is encoded again without its signature, as the signer did.
 */
export function verifyEnvelope(env: Envelope, wire?: Uint8Array): boolean {
  if (env.sender === undefined) return false
  const signed = wire !== undefined ? signedPart(wire, env.signature) : undefined
  return verifySignature(env.sender.publicKey, signed ?? signingBytes(env), env.signature)
}

/** DOMAIN || the bytes before the signature field, when `wire` ends with `signature` as its last field. */
function signedPart(wire: Uint8Array, signature: Uint8Array): Uint8Array | undefined {
  if (signature.length !== 64 || wire.length < SIGNATURE_TAIL) return undefined
  const at = wire.length - SIGNATURE_TAIL
  if (wire[at] !== SIGNATURE_FIELD[0] || wire[at + 1] !== SIGNATURE_FIELD[1]) return undefined
  if (!Buffer.from(wire.buffer, wire.byteOffset + at + 2, 64).equals(signature)) return undefined
  return withDomain(wire.subarray(0, at))
}

/** proto/envelope.proto as wire types, generated (proto/envelope.wire.ts, `npm run proto`). */
export const ENVELOPE_WIRE = EnvelopeWire

const MAX_ADDRS = 16

/**
 * Decodes wire bytes strictly: wrong wire types and unknown fields are refused before protons
 * (which decodes by field number alone) sees them; each handle carries at most 16 addresses.
 */
export function decodeEnvelope(bytes: Uint8Array): Envelope {
  checkWire(bytes, ENVELOPE_WIRE)
  return Envelope.decode(bytes, {
    limits: { sender: { addrs: MAX_ADDRS }, replyTo: { addrs: MAX_ADDRS } },
  })
}
