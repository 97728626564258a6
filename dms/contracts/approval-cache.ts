/**
 * `checkApproval` with a memory of good signatures: a credential whose signature was verified once
 * is recognised again by its signature and fields, without a second Ed25519 verification. The
 * bid-request topic's admission (dms/provider/bid-request-gate.ts) checks the credential of every
 * gossip message, so a flood of copies of one good credential costs a map look-up each. Only the
 * signature is remembered: expiry and the sender are checked every time.
 * Spec: specs/protocol.md ("Approval").
 */
import type { ApprovalCredential } from './model.js'
import { checkApproval, type ApprovalProblem, type ApprovalWant } from './approval.js'

export class ApprovalCache {
  /** signature -> the fields it was verified over, least recently used first. */
  private readonly verified = new Map<string, string>()

  /**
   * @param maxEntries signatures remembered. @default 4096
   * @param checker the full check (tests count its signature verifications). @default checkApproval
   */
  constructor(
    private readonly maxEntries = 4096,
    private readonly checker: typeof checkApproval = checkApproval,
  ) {}

  get size(): number {
    return this.verified.size
  }

  /** As `checkApproval`, the signature verified only when not seen before over the same fields. */
  check(cred: ApprovalCredential | undefined, want: ApprovalWant): ApprovalProblem | undefined {
    if (cred === undefined) return 'no_approval'
    const fields = `${cred.peer}\n${cred.contractDb}\n${cred.issuedAt}\n${cred.expiresAt}\n${cred.roles?.join(',') ?? '-'}`
    if (this.verified.get(cred.signature) === fields) {
      if (cred.contractDb !== want.contractDb) return 'approval_other_contract_db'
      if (cred.peer !== want.peer) return 'approval_other_peer'
      this.verified.delete(cred.signature)
      this.verified.set(cred.signature, fields)
      return this.checker(cred, want, { signatureChecked: true })
    }
    const problem = this.checker(cred, want)
    // Expired or future credentials were verified too: their signature is good.
    if (problem === undefined || problem === 'approval_expired' || problem === 'approval_future') {
      this.verified.set(cred.signature, fields)
      if (this.verified.size > this.maxEntries)
        this.verified.delete(this.verified.keys().next().value as string)
    }
    return problem
  }
}
