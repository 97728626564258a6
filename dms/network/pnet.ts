/**
 * Private networks: a pre-shared key (libp2p pnet, XSalsa20 over every connection before noise)
 * so an organisation can run a closed marketplace. A peer without the same key cannot finish a
 * connection. Spec: specs/protocol.md ("Private networks"), specs/config.md (`network.pnet`).
 */
import { readFileSync } from 'node:fs'
import { generateKey, preSharedKey } from '@libp2p/pnet'
import { DmsError } from '../../actors/errors.js'

/** The swarm key file is missing, unreadable or not in the libp2p format. */
export class SwarmKeyError extends DmsError {
  constructor(message: string) {
    super('INVALID_SWARM_KEY', message)
  }
}

const FORMAT = /^\/key\/swarm\/psk\/1\.0\.0\/\r?\n\/base16\/\r?\n[0-9a-fA-F]{64}\s*$/

/** Reads and checks a swarm key file (`/key/swarm/psk/1.0.0/`, `/base16/`, 64 hex digits). */
export function readSwarmKey(path: string): Uint8Array {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (err) {
    throw new SwarmKeyError(`network.pnet.keyFile ${path}: ${(err as Error).message}`)
  }
  if (!FORMAT.test(text))
    throw new SwarmKeyError(
      `network.pnet.keyFile ${path}: not a swarm key (expected "/key/swarm/psk/1.0.0/", "/base16/" and 64 hex digits; make one with "dms swarm-key")`,
    )
  return new TextEncoder().encode(text.trim())
}

/** A new random swarm key, in the file format. */
export function newSwarmKey(): string {
  const out = new Uint8Array(95)
  generateKey(out)
  return new TextDecoder().decode(out)
}

/** The libp2p connection protector for `key` (from readSwarmKey). */
export function protector(key: Uint8Array): ReturnType<typeof preSharedKey> {
  return preSharedKey({ psk: key })
}

/**
 * Whether a failed dial or upgrade looks like a pre-shared key mismatch: with different keys the
 * bytes after the pnet nonce exchange are noise to the other side, so the noise handshake fails.
 */
export function looksLikeKeyMismatch(err: unknown): boolean {
  const text = `${(err as Error)?.name ?? ''} ${(err as Error)?.message ?? ''}`
  return /handshake|decrypt|invalid|EncryptionFailed|unexpected end/i.test(text)
}
