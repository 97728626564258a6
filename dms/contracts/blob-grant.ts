/**
 * Delegated blob grants (specs/data-plane.md, "Delegated grants"): a requester lets one provider
 * fetch an output archive straight from the provider that produced it for that requester. The
 * serving node checks the delegation against a grant of its own to the delegating owner, so a
 * requester can only pass on what it may fetch itself.
 */
import type { KeyPair } from '../../actors/identity.js'
import { signDoc, verifyDoc } from './canonical.js'
import { DOMAIN, type BlobGrant } from './model.js'
import { publicKeyOfPeer } from './party.js'

/** How long a delegation lasts by default: long enough for a task's inputs to be fetched. */
export const BLOB_GRANT_TTL_MS = 60 * 60 * 1000

/** `owner` (whose key `key` is) lets `grantee` fetch `sha256` until `expiresAt`. */
export function signBlobGrant(key: KeyPair, body: Omit<BlobGrant, 'signature'>): BlobGrant {
  return { ...body, signature: signDoc(key, DOMAIN.blobGrant, body) }
}

/** Why `grant` does not let `peer` fetch `sha256` now, or undefined when it does. */
export function blobGrantProblem(
  grant: BlobGrant,
  want: { sha256: string; peer: string; now: number },
): string | undefined {
  if (grant.sha256 !== want.sha256) return 'the grant is for another blob'
  if (grant.grantee !== want.peer) return 'the grant is for another peer'
  if (grant.expiresAt <= want.now) return 'the grant has expired'
  const { signature, ...body } = grant
  const key = publicKeyOfPeer(grant.owner)
  if (key === undefined || !verifyDoc(key, DOMAIN.blobGrant, body, signature))
    return 'the grant is not signed by its owner'
  return undefined
}
