import { createHash } from 'node:crypto'
import type { KeyPair } from '../../actors/identity.js'
import { verifySignature } from '../../actors/identity.js'
import { canonicalJson } from '../../actors/canonical-json.js'

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
