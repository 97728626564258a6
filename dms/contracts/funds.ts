/**
 * Funds proofs: the contract-db's short-lived, signed statement of what a peer can spend now.
 * Issued on `/dms/account/funds` to an approved peer, attached by a requester to its bid requests,
 * and checked offline by the provider against the job's max price before it reserves anything,
 * so a peer without money holds nothing anywhere. Spec: specs/contract-db.md ("Funds proofs") and
 * specs/protocol.md ("Checks on the receiving side").
 */
import type { KeyPair } from '../../actors/identity.js'
import { APPROVAL_CLOCK_SKEW_MS } from './approval.js'
import { signDoc, verifyDoc } from './canonical.js'
import { DOMAIN, type FundsProof } from './model.js'
import { publicKeyOfPeer } from './party.js'

/**
 * How long a funds proof is valid. It bounds how stale the balance a provider trusts can be (what
 * was spent meanwhile is still refused by the contract-db at verification), and it sets the load:
 * a requester asks once per half-life while it posts jobs.
 * @default 60000 (one minute)
 */
export const FUNDS_TTL_MS = 60_000

/** Why a funds proof is not accepted for a job (the reason's code, after `funds:`). */
export type FundsProblem =
  | 'no_funds_proof'
  | 'funds_forged'
  | 'funds_other_peer'
  | 'funds_other_contract_db'
  | 'funds_expired'
  | 'funds_future'
  | 'funds_short'

/** What a funds proof is checked against. */
export interface FundsWant {
  /** The message's sender peer. */
  peer: string
  /** The contract-db this node trusts. */
  contractDb: string
  now: number
  /** The job's max price: the most its contract can lock in escrow. */
  need: number
  clockSkewMs?: number
}

/** Signs a funds proof for `peer`, stating `available`, valid from `now` for `ttlMs`. */
export function issueFunds(
  key: KeyPair,
  body: { peer: string; contractDb: string; available: number; now: number; ttlMs?: number },
): FundsProof {
  const doc = {
    peer: body.peer,
    contractDb: body.contractDb,
    available: body.available,
    issuedAt: body.now,
    expiresAt: body.now + (body.ttlMs ?? FUNDS_TTL_MS),
  }
  return { ...doc, signature: signDoc(key, DOMAIN.funds, doc) }
}

/**
 * Checks a funds proof offline: it names the sender, was signed by the trusted contract-db, is
 * valid now, and states at least `need`. Undefined when it is good. `signatureChecked`: the
 * caller verified this very signature over these fields before (FundsCache).
 */
export function checkFunds(
  proof: FundsProof | undefined,
  want: FundsWant,
  opts: { signatureChecked?: boolean } = {},
): FundsProblem | undefined {
  if (proof === undefined) return 'no_funds_proof'
  if (proof.contractDb !== want.contractDb) return 'funds_other_contract_db'
  if (proof.peer !== want.peer) return 'funds_other_peer'
  if (opts.signatureChecked !== true) {
    const key = publicKeyOfPeer(want.contractDb)
    const { signature, ...body } = proof
    if (key === undefined || !verifyDoc(key, DOMAIN.funds, body, signature)) return 'funds_forged'
  }
  if (proof.expiresAt <= want.now) return 'funds_expired'
  if (proof.issuedAt > want.now + (want.clockSkewMs ?? APPROVAL_CLOCK_SKEW_MS)) return 'funds_future'
  if (!(proof.available >= want.need)) return 'funds_short'
  return undefined
}

/** The decline reason a provider sends for `problem` (`funds: <code> …`, kind `funds`). */
export function fundsReason(problem: FundsProblem, proof: FundsProof | undefined, need: number): string {
  return problem === 'funds_short'
    ? `funds: funds_short ${proof!.available} available, this provider's bid would lock ${need}`
    : `funds: ${problem}`
}

/**
 * `checkFunds` with a memory of good signatures (as ApprovalCache): a proof verified once is
 * recognised again by its signature and fields, so the requests of one requester cost one
 * Ed25519 verification per proof, not one each. Expiry, sender and amount are checked every time.
 */
export class FundsCache {
  /** signature -> the fields it was verified over, least recently used first. */
  private readonly verified = new Map<string, string>()

  /** @param maxEntries signatures remembered. @default 4096 */
  constructor(private readonly maxEntries = 4096) {}

  get size(): number {
    return this.verified.size
  }

  check(proof: FundsProof | undefined, want: FundsWant): FundsProblem | undefined {
    if (proof === undefined) return 'no_funds_proof'
    const fields = `${proof.peer}\n${proof.contractDb}\n${proof.available}\n${proof.issuedAt}\n${proof.expiresAt}`
    if (this.verified.get(proof.signature) === fields) {
      this.verified.delete(proof.signature)
      this.verified.set(proof.signature, fields)
      return checkFunds(proof, want, { signatureChecked: true })
    }
    const problem = checkFunds(proof, want)
    if (
      problem === undefined ||
      problem === 'funds_expired' ||
      problem === 'funds_future' ||
      problem === 'funds_short'
    ) {
      this.verified.set(proof.signature, fields)
      if (this.verified.size > this.maxEntries)
        this.verified.delete(this.verified.keys().next().value as string)
    }
    return problem
  }
}
