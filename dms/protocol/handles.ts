/**
 * Where DMS messages go: the gossip topic of bid requests, the inboxes of the well-known actors
 * on every node, and the handles built from a peer id. Spec: specs/protocol.md ("Behaviours").
 */
import type { Handle } from '../../actors/envelope.js'
import { DmsError } from '../../actors/errors.js'
import { publicKeyOfPeer } from '../contracts/party.js'

/** Gossip topic that carries bid requests. */
export const BID_REQUEST_TOPIC = '/dms/bid-requests/1'

/** Gossip topic that carries providers' capacity news (freed resources). */
export const CAPACITY_TOPIC = '/dms/capacity/1'

/** Inboxes of the well-known actors on every node. */
export const INBOX = {
  provider: 'provider',
  contractDb: 'contract-db',
  blobs: 'blobs',
  /** The requester's listener of capacity news. */
  capacity: 'capacity',
} as const

/** The requester-side actor of one job. */
export const jobInbox = (jobId: string) => `job/${jobId}`

/** The provider-side child actor of one allocation. */
export const allocationInbox = (allocationId: string) => `alloc/${allocationId}`

/** A peer id no Ed25519 public key can be read from (another key type, or not a peer id). */
export class BadPeerIdError extends DmsError<{ peer: string }> {
  constructor(peer: string) {
    super(
      'BAD_PEER_ID',
      `${peer.slice(0, 128)} is not an Ed25519 peer id: DMS peers are named by the peer id of their Ed25519 key (12D3KooW...)`,
      { peer: peer.slice(0, 128) },
    )
  }
}

/** The Ed25519 public key a peer id was derived from; throws BadPeerIdError for any other id. */
export function publicKeyOf(peer: string): Uint8Array<ArrayBuffer> {
  const key = publicKeyOfPeer(peer)
  if (key === undefined) throw new BadPeerIdError(peer)
  return new Uint8Array(key)
}

/**
 * The handle of inbox `inbox` on `peer`, reached at `addrs` (none: found through the peer
 * store), expecting replies signed by the peer's own key. Throws BadPeerIdError for a bad id.
 */
export function handleOf(peer: string, inbox: string, addrs: readonly string[] = []): Handle {
  return { publicKey: publicKeyOf(peer), peer, inbox, addrs: [...addrs] }
}
