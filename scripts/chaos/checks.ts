/**
 * The chaos run's checks on money (scripts/chaos.ts), read from the contract-db's operator socket
 * once every job is final: what was credited is in balances or escrow, nothing more or less; every
 * closed contract splits its escrow; none is settled twice; the providers hold what contracts
 * paid; the requester's settlements agree with the contract-db; no contract is left active after
 * the drain. Spec: specs/chaos.md.
 */
import { ApiClient } from '../../dms/api/client.js'
import type { ContractSummary } from '../../dms/contract-db/operator-api.js'
import type { Account } from '../../dms/contract-db/records.js'
import type { ChaosReport } from './report.js'

/** What the checks read of a job (GET /v1/jobs/:id). */
export interface JobView {
  id: string
  state: string
  createdAt: number
  history: Array<{ state: string; at: number }>
  error?: { code: string; message: string }
  settlement?: { contractId: string; paidToProvider: number; refundedToRequester: number }
  attempts?: Array<{
    provider: string
    contractId?: string
    settlement?: { contractId: string; paidToProvider: number }
  }>
}

/** Every contract at the contract-db (its operator socket). */
export async function contractsAt(contractDbSocket: string): Promise<ContractSummary[]> {
  const { contracts } = await new ApiClient(contractDbSocket).ok<{ contracts: ContractSummary[] }>(
    'GET',
    '/v1/contract-db/contracts',
  )
  return contracts
}

/**
 * The end assertion: the contracts still `active` once the drain is over (escrow held for no
 * job). Every one is a problem of the run: with the chaos devnet's short deadlines, even those of
 * a requester gone for good end within the drain (expired at startBy or claimed past settleBy).
 */
export function activeAfterDrain(contracts: ContractSummary[]): string[] {
  return contracts.filter((c) => c.state === 'active').map((c) => c.contractId)
}

/**
 * The escrow section of the report, from the contract-db at `contractDbSocket`, and what its
 * active contracts hold (for the problem line).
 */
export async function checkEscrow(
  contractDbSocket: string,
  providerIds: Set<string>,
  views: JobView[],
  credited: number,
): Promise<ChaosReport['escrow'] & { activeEscrow: number }> {
  // Escrow at the contract-db: what was credited is in balances or escrow, nothing more or less.
  const cdb = new ApiClient(contractDbSocket)
  const { accounts } = await cdb.ok<{ accounts: Account[] }>('GET', '/v1/contract-db/accounts')
  const contracts = await contractsAt(contractDbSocket)
  const balances = accounts.reduce((s, a) => s + a.balance, 0)
  const inEscrow = accounts.reduce((s, a) => s + a.escrow, 0)
  const byState: Record<string, number> = {}
  for (const c of contracts) byState[c.state] = (byState[c.state] ?? 0) + 1
  const closed = contracts.filter((c) => c.paidToProvider !== undefined)
  const badSplits = closed
    .filter((c) => (c.paidToProvider ?? 0) + (c.refundedToRequester ?? 0) !== c.escrow)
    .map((c) => c.contractId)
  const paidToProviders = closed.reduce((s, c) => s + (c.paidToProvider ?? 0), 0)
  const providerBalances = accounts.filter((a) => providerIds.has(a.peer)).reduce((s, a) => s + a.balance, 0)
  const activeEscrow = contracts
    .filter((c) => c.paidToProvider === undefined)
    .reduce((s, c) => s + c.escrow, 0)
  const byId = new Map(contracts.map((c) => [c.contractId, c]))
  const seen = new Map<string, number>()
  const mismatches: string[] = []
  for (const v of views) {
    const settlements = [
      ...(v.attempts ?? []).flatMap((a) => (a.settlement ? [a.settlement] : [])),
      ...(v.settlement ? [v.settlement] : []),
    ]
    for (const s of settlements) {
      seen.set(s.contractId, (seen.get(s.contractId) ?? 0) + 1)
      const c = byId.get(s.contractId)
      if (c?.paidToProvider !== s.paidToProvider)
        mismatches.push(
          `${s.contractId}: requester says paid ${s.paidToProvider}, contract-db ${c?.paidToProvider}`,
        )
    }
  }
  const settledTwice = [...seen].filter(([, n]) => n > 1).map(([id]) => id)
  const openAfterDrain = activeAfterDrain(contracts)
  const conserved =
    balances + inEscrow === credited &&
    activeEscrow === inEscrow &&
    paidToProviders === providerBalances &&
    badSplits.length === 0 &&
    settledTwice.length === 0
  return {
    activeEscrow,
    credited,
    balances,
    inEscrow,
    conserved,
    contracts: contracts.length,
    byState,
    badSplits,
    settledTwice,
    paidToProviders,
    providerBalances,
    openAfterDrain,
    mismatches,
  }
}
