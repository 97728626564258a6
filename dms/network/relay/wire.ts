/**
 * `/dms/relay/approval/1.0.0`: a peer presents its approval credential to a relay before it holds
 * a reservation there or is relayed by it. One length-prefixed `ApprovalMessage` (proto/dms.proto:
 * the credential as canonical JSON, as the contract-db hands it out) per stream, client to relay;
 * the relay answers nothing and closes. The bytes are encoded and decoded by the composition root's
 * parts (dms/contract-clients/relay-credentials.ts), not here. Spec: specs/protocol.md ("NAT traversal").
 */
import type { Stream } from '@libp2p/interface'
import { lpStream } from '@libp2p/utils'

export const RELAY_APPROVAL_PROTOCOL = '/dms/relay/approval/1.0.0'

/** Largest credential message read (a credential is about 300 bytes). */
export const MAX_RELAY_APPROVAL_BYTES = 4096

/** How long one presentation may take, either side. */
export const RELAY_APPROVAL_TIMEOUT_MS = 5000

/** Writes an encoded credential on `stream` and closes it. */
export async function writeApproval(stream: Stream, bytes: Uint8Array, signal: AbortSignal): Promise<void> {
  await lpStream(stream, { maxDataLength: MAX_RELAY_APPROVAL_BYTES }).write(bytes, { signal })
  await stream.close({ signal })
}

/** Reads one encoded credential from `stream` (at most MAX_RELAY_APPROVAL_BYTES; throws otherwise). */
export async function readApproval(stream: Stream, signal: AbortSignal): Promise<Uint8Array> {
  const msg = await lpStream(stream, { maxDataLength: MAX_RELAY_APPROVAL_BYTES }).read({ signal })
  return msg.subarray()
}
