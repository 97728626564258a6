/**
 * What a relay knows of the peers it serves: the approval credentials they presented on
 * `/dms/relay/approval/1.0.0` (wire.ts), checked offline against the contract-db the relay trusts
 * and kept until they expire. The relay's gate (gate.ts) asks it whether a peer is approved, and
 * with which roles, and may wait a little for a credential still on its way: a peer presents it
 * when it connects, at the same moment it asks for a reservation. Spec: specs/protocol.md
 * ("NAT traversal"). What a credential is and how it is checked is not the network's business:
 * the composition root passes the check in (`CredentialCheck`, made by dms/contracts).
 */
import type { Logger } from 'pino'
import type { Clock } from '../../../actors/clock.js'

/** A peer the relay serves: the roles of its credential, valid until `expiresAt`. */
export interface ApprovedPeer {
  roles: readonly string[]
  expiresAt: number
}

/**
 * How a relay checks what a peer presented (the bytes read off the wire): the roles and expiry of
 * a good credential for `peer` from `contractDb`, or why it is refused (a short label).
 */
export interface CredentialCheck {
  check(
    bytes: Uint8Array,
    want: { peer: string; contractDb: string; now: number },
  ): ApprovedPeer | { problem: string }
}

export interface RelayApprovalsInit {
  /** Peer id of the contract-db whose credentials are honoured. */
  contractDb: string
  /** How long a decision waits for the credential of a peer that has presented none yet. @default 3000 */
  waitMs?: number
  /** Peers whose credentials are kept; the least recently presented is forgotten first. @default 4096 */
  maxPeers?: number
  /** Decisions waiting for a credential at once; more are refused without waiting. @default 256 */
  maxWaiting?: number
}

export class RelayApprovals {
  private readonly peers = new Map<string, ApprovedPeer>()
  private readonly wakers = new Map<string, Set<() => void>>()
  private waiters = 0
  /** Credentials refused, by problem. */
  readonly refused: Partial<Record<string, number>> = {}

  constructor(
    private readonly c: { clock: Clock; log: Logger; credentials: CredentialCheck },
    private readonly init: RelayApprovalsInit,
  ) {}

  /** Decisions waiting for a credential now. */
  get waiting(): number {
    return this.waiters
  }

  get contractDb(): string {
    return this.init.contractDb
  }

  /** Checks the credential `peer` presented (its bytes); kept when it is good. Undefined when good. */
  present(peer: string, bytes: Uint8Array): string | undefined {
    const found = this.c.credentials.check(bytes, {
      peer,
      contractDb: this.init.contractDb,
      now: this.c.clock.now(),
    })
    if ('problem' in found) {
      const { problem } = found
      this.refused[problem] = (this.refused[problem] ?? 0) + 1
      this.c.log.debug({ peer, problem }, 'relay: approval credential refused')
      return problem
    }
    this.peers.delete(peer)
    this.peers.set(peer, { roles: found.roles, expiresAt: found.expiresAt })
    if (this.peers.size > (this.init.maxPeers ?? 4096)) this.peers.delete(this.peers.keys().next().value!)
    for (const wake of [...(this.wakers.get(peer) ?? [])]) wake()
    return undefined
  }

  /** The peer's approval, while its credential is valid. */
  approved(peer: string): ApprovedPeer | undefined {
    const a = this.peers.get(peer)
    if (a === undefined) return undefined
    if (a.expiresAt > this.c.clock.now()) return a
    this.peers.delete(peer)
    return undefined
  }

  /** The peer's approval, waiting up to `waitMs` for a credential not presented yet. */
  async await(peer: string): Promise<ApprovedPeer | undefined> {
    const now = this.approved(peer)
    if (now !== undefined || this.waiters >= (this.init.maxWaiting ?? 256)) return now
    this.waiters++
    const set = this.wakers.get(peer) ?? new Set<() => void>()
    this.wakers.set(peer, set)
    try {
      await new Promise<void>((resolve) => {
        const done = () => {
          this.c.clock.clearTimeout(timer)
          set.delete(done)
          resolve()
        }
        const timer = this.c.clock.setTimeout(done, this.init.waitMs ?? 3000)
        set.add(done)
      })
    } finally {
      this.waiters--
      if (set.size === 0) this.wakers.delete(peer)
    }
    return this.approved(peer)
  }
}
