import { createHash } from 'node:crypto'
import type { KeyPair } from '../../actors/identity.js'
import { verifySignature } from '../../actors/identity.js'

/** JSON with object keys sorted at every level: the byte form that documents are signed in. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'number' && !Number.isFinite(value))
      throw new Error('cannot sign a non-finite number')
    return JSON.stringify(value)
  }
  // As JSON.stringify does: an undefined element is null, so a signature survives a JSON round trip.
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v ?? null)).join(',')}]`
  const obj = value as Record<string, unknown>
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort()
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(',')}}`
}

const bytesFor = (domain: string, doc: unknown) =>
  new TextEncoder().encode(`${domain}\0${canonicalJson(doc)}`)

/** Signs a document under a domain (so a signature for one kind can never pass as another). */
export function signDoc(key: KeyPair, domain: string, doc: unknown): string {
  return Buffer.from(key.sign(bytesFor(domain, doc))).toString('base64url')
}

export function verifyDoc(publicKey: Uint8Array, domain: string, doc: unknown, signature: string): boolean {
  try {
    return verifySignature(
      publicKey,
      bytesFor(domain, doc),
      new Uint8Array(Buffer.from(signature, 'base64url')),
    )
  } catch {
    return false
  }
}

export function hashDoc(doc: unknown): string {
  return createHash('sha256').update(canonicalJson(doc)).digest('hex')
}
