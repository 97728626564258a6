/**
 * The registry of approved entities (sublevel `cdb-approved`): only approved peers are parties to
 * contracts and get approval credentials. Spec: specs/contract-db.md ("Accounts and approvals").
 * Callers serialise read-then-write operations.
 */
import type { Logger } from 'pino'
import type { Clock } from '../../actors/clock.js'
import { REFUSAL, refuse } from '../contracts/errors.js'
import { publicKeyOfPeer } from '../contracts/party.js'
import type { Repo } from '../store/db.js'
import type { ApprovedEntity } from './records.js'

export class Approvals {
  constructor(
    private readonly repo: Repo<ApprovedEntity>,
    private readonly c: { clock: Pick<Clock, 'now'>; log: Logger },
  ) {}

  /** Approves an Ed25519 peer id (BAD_PEER_ID otherwise); idempotent: an approval keeps its time. */
  async approve(peer: string): Promise<ApprovedEntity> {
    if (publicKeyOfPeer(peer) === undefined)
      throw refuse(REFUSAL.badPeerId, `${peer} is not an Ed25519 peer id`)
    const existing = await this.repo.get(peer)
    if (existing !== undefined) return existing
    const rec = { peer, approvedAt: this.c.clock.now() }
    await this.repo.put(peer, rec)
    this.c.log.info({ peer }, 'entity approved')
    return rec
  }

  /** Removes an approval. New contracts naming the peer are refused; active ones still close. */
  async revoke(peer: string): Promise<boolean> {
    if ((await this.repo.get(peer)) === undefined) return false
    await this.repo.del(peer)
    this.c.log.info({ peer }, 'entity revoked')
    return true
  }

  async isApproved(peer: string): Promise<boolean> {
    return (await this.repo.get(peer)) !== undefined
  }

  list(): Promise<ApprovedEntity[]> {
    return this.repo.values()
  }
}
