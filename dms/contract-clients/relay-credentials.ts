/**
 * Approval credentials as a relay sees them (`/dms/relay/approval/1.0.0`,
 * dms/network/relay/wire.ts): the network reads and writes bytes, this says what they are. A
 * presented credential is decoded (bounded, checked against its shape), then checked offline like
 * any other (`checkApproval`, its signature remembered by an ApprovalCache). Spec:
 * specs/protocol.md ("NAT traversal").
 */
import { PAYLOAD_CODECS } from '../protocol/codecs.js'
import { ApprovalCache } from '../contracts/approval-cache.js'
import { rolesOf } from '../contracts/approval.js'
import type { ApprovalCredential } from '../contracts/model.js'

const codec = PAYLOAD_CODECS.approvalReply

/** A credential encoded for a relay, with the id that changes at its renewal (its signature). */
export function presentedCredential(cred: ApprovalCredential): { id: string; bytes: Uint8Array } {
  return { id: cred.signature, bytes: codec.encode(cred) }
}

/** The relay's check of presented bytes: the credential's roles and expiry, or why it is refused. */
export function relayCredentialCheck(): {
  check(
    bytes: Uint8Array,
    want: { peer: string; contractDb: string; now: number },
  ): { roles: readonly string[]; expiresAt: number } | { problem: string }
} {
  const cache = new ApprovalCache()
  return {
    check: (bytes, want) => {
      let cred: ApprovalCredential
      try {
        cred = codec.decode(bytes)
      } catch {
        return { problem: 'bad_credential' }
      }
      const problem = cache.check(cred, want)
      return problem !== undefined ? { problem } : { roles: rolesOf(cred), expiresAt: cred.expiresAt }
    },
  }
}
