import { peerIdFromString } from '@libp2p/peer-id'
import { keyToString, type PublicKeyBytes } from '../../actors/identity.js'
import type { Party } from './model.js'

/** The Ed25519 public key inside an Ed25519 peer id, or undefined for other key types. */
export function publicKeyOfPeer(peer: string): PublicKeyBytes | undefined {
  try {
    const id = peerIdFromString(peer)
    if (id.type !== 'Ed25519') return undefined
    return id.publicKey.raw
  } catch {
    return undefined
  }
}

export function partyOf(peer: string, publicKey: PublicKeyBytes): Party {
  return { peer, publicKey: keyToString(publicKey) }
}

/** true when the party's key is the key its peer id was derived from. */
export function partyIsConsistent(p: Party): boolean {
  const k = publicKeyOfPeer(p.peer)
  return k !== undefined && keyToString(k) === p.publicKey
}
