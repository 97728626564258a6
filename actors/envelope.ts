import { randomBytes } from 'node:crypto'
import { Envelope, type Handle } from '../proto/envelope.js'
import { verifySignature, type KeyPair } from './identity.js'
import { EnvelopeWire } from '../proto/envelope.wire.js'
import { checkWire } from './wire.js'

export { Envelope, type Handle }

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
}

function signingBytes(env: Envelope): Uint8Array {
  const body = Envelope.encode({ ...env, signature: new Uint8Array(0) })
  const out = new Uint8Array(DOMAIN.length + body.length)
  out.set(DOMAIN, 0)
  out.set(body, DOMAIN.length)
  return out
}

/** Builds and signs an envelope; returns the wire bytes. */
export function sealEnvelope(key: KeyPair, init: EnvelopeInit): Uint8Array {
  const env: Envelope = {
    version: ENVELOPE_VERSION,
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
  env.signature = key.sign(signingBytes(env)) as Uint8Array<ArrayBuffer>
  return Envelope.encode(env)
}

/** true when the envelope's signature is valid for its sender key. */
export function verifyEnvelope(env: Envelope): boolean {
  if (env.sender === undefined) return false
  return verifySignature(env.sender.publicKey, signingBytes(env), env.signature)
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
