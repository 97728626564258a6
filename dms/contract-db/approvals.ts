/**
 * The registry of approved entities (the store's approvals, store/port.ts): only approved peers are parties to
 * contracts and get approval credentials. Spec: specs/contract-db.md ("Accounts and approvals").
 * Callers serialise read-then-write operations.
 */
import type { Logger } from 'pino'
import type { Clock } from '../../actors/clock.js'
import { REFUSAL, refuse } from '../contracts/errors.js'
import { DEFAULT_ROLES, ROLES, type Role } from '../contracts/model.js'
import { publicKeyOfPeer } from '../contracts/party.js'
import type { ApprovedEntity } from './records.js'

/** Where approvals are kept: a table by peer id (the store's, or a level `Repo` in tests). */
export interface ApprovalTable {
  get(peer: string): Promise<ApprovedEntity | undefined>
  put(peer: string, e: ApprovedEntity): Promise<void>
  del(peer: string): Promise<void>
  values(): Promise<ApprovedEntity[]>
}

export class Approvals {
  constructor(
    private readonly repo: ApprovalTable,
    private readonly c: { clock: Pick<Clock, 'now'>; log: Logger },
  ) {}

  /**
   * Approves an Ed25519 peer id (BAD_PEER_ID otherwise) with `roles` (BAD_ROLE for an unknown one;
   * none given: `DEFAULT_ROLES`, or the roles it has when approved already). Idempotent: an
   * approval keeps its time; given roles replace the ones it had.
   */
  async approve(peer: string, roles?: readonly string[]): Promise<ApprovedEntity> {
    if (publicKeyOfPeer(peer) === undefined)
      throw refuse(REFUSAL.badPeerId, `${peer} is not an Ed25519 peer id`)
    const wanted = roles === undefined ? undefined : checkedRoles(roles)
    const existing = await this.repo.get(peer)
    if (existing !== undefined && (wanted === undefined || sameRoles(rolesOfEntity(existing), wanted)))
      return existing
    const rec = {
      peer,
      approvedAt: existing?.approvedAt ?? this.c.clock.now(),
      roles: wanted ?? [...DEFAULT_ROLES],
    }
    await this.repo.put(peer, rec)
    this.c.log.info({ peer, roles: rec.roles }, existing === undefined ? 'entity approved' : 'roles changed')
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

  /** The roles of an approved peer; undefined when it is not approved. */
  async rolesOf(peer: string): Promise<readonly Role[] | undefined> {
    const rec = await this.repo.get(peer)
    return rec === undefined ? undefined : rolesOfEntity(rec)
  }

  list(): Promise<ApprovedEntity[]> {
    return this.repo.values()
  }
}

/** An approval's roles: its own, or `DEFAULT_ROLES` for one stored before roles. */
export const rolesOfEntity = (e: ApprovedEntity): readonly Role[] => e.roles ?? DEFAULT_ROLES

/** `roles` checked (BAD_ROLE), without repeats, in `ROLES` order; at least one. */
export function checkedRoles(roles: readonly string[]): Role[] {
  const unknown = roles.find((r) => !(ROLES as readonly string[]).includes(r))
  if (unknown !== undefined)
    throw refuse(
      REFUSAL.badRole,
      `unknown role ${JSON.stringify(unknown.slice(0, 32))}: use ${ROLES.join(', ')}`,
    )
  if (roles.length === 0) throw refuse(REFUSAL.badRole, `name at least one role: ${ROLES.join(', ')}`)
  return ROLES.filter((r) => roles.includes(r))
}

const sameRoles = (a: readonly Role[], b: readonly Role[]) =>
  a.length === b.length && a.every((r, i) => b[i] === r)
