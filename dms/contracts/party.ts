import { peerIdFromString } from '@libp2p/peer-id'
import { keyToString, type PublicKeyBytes } from '../../actors/identity.js'
import type { Party } from './model.js'

const keysOfPeers = new Map<string, PublicKeyBytes | undefined>()
const KEYS_OF_PEERS_MAX = 10_000

/**
 * The Ed25519 public key inside an Ed25519 peer id, or undefined for other key types. Remembered
 * (bounded): a job asks it of the same few peers for every signature it checks, and parsing a
 * peer id costs more than the lookup. The bytes returned are shared: never change them.
 */
export function publicKeyOfPeer(peer: string): PublicKeyBytes | undefined {
  if (keysOfPeers.has(peer)) return keysOfPeers.get(peer)
  let key: PublicKeyBytes | undefined
  try {
    const id = peerIdFromString(peer)
    key = id.type === 'Ed25519' ? id.publicKey.raw : undefined
  } catch {
    key = undefined
  }
  if (keysOfPeers.size >= KEYS_OF_PEERS_MAX) keysOfPeers.clear()
  keysOfPeers.set(peer, key)
  return key
}

export function partyOf(peer: string, publicKey: PublicKeyBytes): Party {
  return { peer, publicKey: keyToString(publicKey) }
}

/** true when the party's key is the key its peer id was derived from. */
export function partyIsConsistent(p: Party): boolean {
  const k = publicKeyOfPeer(p.peer)
  return k !== undefined && keyToString(k) === p.publicKey
}
