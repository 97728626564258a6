/**
 * The chaos run's report (scripts/chaos.ts): its options, the faults it injected, the jobs and the
 * escrow it found, the verdict, and the table it prints. Spec: specs/chaos.md.
 */
import type { DevnetInit } from '../../dms/cli/devnet.js'

export type FaultKind =
  | 'kill-provider'
  | 'restart-requester'
  | 'restart-contract-db'
  /** A second requester posts one job and is SIGKILLed in a job state, never to come back. */
  | 'requester-gone'
  /** The contract-db SIGKILLs itself after it stored a lock, before it answers the verify. */
  | 'contract-db-lock-kill'
  /** One of several contract-db instances (`contractDbInstances`) SIGKILLed, in turn, and restarted. */
  | 'kill-contract-db-instance'

export interface ChaosOptions {
  seed: number
  providers: number
  /** Jobs to post, one every `jobEveryMs`. */
  jobs: number
  jobEveryMs: number
  /** Faults, spread over the posting period in a seeded order. */
  faults: Partial<Record<FaultKind, number>>
  /** Bound on the wait for every posted job to reach a final state. */
  drainMs: number
  /**
   * Contract-db instances (`startDevnet`'s `contractDbInstances`): more than one needs
   * `contractDbStore` on PostgreSQL. @default 1
   */
  contractDbInstances?: number
  /** Where the contract-db keeps its books. @default level */
  contractDbStore?: DevnetInit['contractDbStore']
  /** Progress lines. @default none */
  say?: (line: string) => void
  /** Where to write the JSON report. @default none */
  resultsDir?: string
  /** Set once to stop early (SIGINT): the run drains nothing and stops every process. */
  signal?: AbortSignal
}

export interface FaultRecord {
  kind: FaultKind
  target: string
  /** ms since the first post */
  at: number
  downMs: number
  /** Jobs not yet final at the kill; for a provider, jobs it had in `invoking` or `running`. */
  jobsHit: number
  /** Provider kills: of the jobs hit, how many it finished after its restart (re-attached to the
   * container) and how many the requester re-bid (dropped it for a fault). */
  finishedByTarget?: number
  rebid?: number
  /** ms from the restart to its ready line, or the reason it did not come back. */
  recoveredInMs?: number
  error?: string
  /** requester-gone: the job state it was killed in, and how its contracts ended (contract-db). */
  gone?: { peer: string; killedIn?: string; contracts?: Array<{ state: string; reason?: string }> }
  /** contract-db-lock-kill: whether a lock came (and the contract-db died before its answer). */
  lockHit?: boolean
}

export interface ChaosReport {
  seed: number
  options: Omit<ChaosOptions, 'say' | 'signal' | 'resultsDir'>
  durationMs: number
  faults: FaultRecord[]
  jobs: {
    posted: number
    /** Posts the requester did not take (an error answer, or down for 30 s): not jobs, not lost. */
    notTaken: Array<{ name: string; why: string }>
    /** Posts answered `DAEMON_NOT_RUNNING` (requester down) and sent again. */
    postRetries: number
    completed: number
    failed: number
    failedBy: Record<string, number>
    /** Each failed job's error, for the reader. */
    failures: Array<{ id: string; code: string; message: string }>
    cancelled: number
    /** Jobs that dropped a provider for a fault (`attempts`) and were re-bid. */
    rebid: number
    /** Jobs posted with a queueTimeout (every other one), and those that waited in `queued`. */
    withQueueTimeout: number
    queued: number
    /** Posted (or possibly posted) but unknown to the requester, or not final within the drain. */
    lost: number
    lostIds: string[]
    /** ms from post to final state, completed jobs */
    latencyMs: { p50: number; p90: number; max: number }
  }
  escrow: {
    credited: number
    balances: number
    inEscrow: number
    conserved: boolean
    contracts: number
    byState: Record<string, number>
    /** Closed contracts whose paid + refunded differs from their escrow. */
    badSplits: string[]
    /** Contract ids that more than one of the requester's settlements name. */
    settledTwice: string[]
    /** Sum paid by closed contracts vs the providers' balances (equal unless paid twice). */
    paidToProviders: number
    providerBalances: number
    /** Contracts still active once every job is final (escrow held for no job). */
    openAfterDrain: string[]
    /** Requester settlements that differ from the contract-db's record of the contract. */
    mismatches: string[]
  }
  /** No job lost, escrow conserved, every process back: the verdict. */
  ok: boolean
  problems: string[]
  /** Findings that do not fail the run (e.g. escrow still locked in active contracts). */
  warnings: string[]
}

/** The p-th percentile of `xs` (0 for none). */
export const percentile = (xs: number[], p: number) => {
  if (xs.length === 0) return 0
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]
}

/** The report as a table. */
export function table(r: ChaosReport): string {
  const row = (k: string, v: string | number) => `  ${k.padEnd(34)} ${v}`
  const lines = [
    `chaos seed ${r.seed}: ${r.options.providers} providers, ${r.options.jobs} jobs every ${r.options.jobEveryMs} ms, ${(r.durationMs / 1000).toFixed(1)} s`,
    '',
    '  faults',
    ...r.faults.map((f) =>
      row(
        `    ${f.at} ms ${f.kind} ${f.target}`,
        f.error
          ? `DID NOT RECOVER: ${f.error}`
          : f.gone !== undefined
            ? `killed in ${f.gone.killedIn ?? '?'}, never back; its contracts: ${JSON.stringify(f.gone.contracts ?? [])}`
            : `${f.jobsHit} job(s) hit, down ${f.downMs} ms, ready in ${f.recoveredInMs} ms` +
              (f.rebid !== undefined ? `; ${f.finishedByTarget} re-attached, ${f.rebid} re-bid` : '') +
              (f.lockHit !== undefined
                ? f.lockHit
                  ? '; killed between a lock and its reply'
                  : '; no lock came'
                : ''),
      ),
    ),
    '  jobs',
    row('    posted', r.jobs.posted),
    row('    posts not taken', r.jobs.notTaken.length),
    row('    posts retried (requester down)', r.jobs.postRetries),
    row('    completed', r.jobs.completed),
    row('    failed', r.jobs.failed),
    ...Object.entries(r.jobs.failedBy).map(([code, n]) => row(`      ${code}`, n)),
    row('    cancelled', r.jobs.cancelled),
    row('    re-bid after a provider fault', r.jobs.rebid),
    row('    posted with a queueTimeout', r.jobs.withQueueTimeout),
    row('    waited in queued', r.jobs.queued),
    row('    LOST', r.jobs.lost),
    row(
      '    completed latency p50/p90/max',
      `${r.jobs.latencyMs.p50}/${r.jobs.latencyMs.p90}/${r.jobs.latencyMs.max} ms`,
    ),
    '  escrow (micro-tokens, contract-db)',
    row('    credited', r.escrow.credited),
    row(
      '    balances + escrow',
      `${r.escrow.balances} + ${r.escrow.inEscrow} = ${r.escrow.balances + r.escrow.inEscrow}`,
    ),
    row(
      '    paid by contracts / provider bal.',
      `${r.escrow.paidToProviders} / ${r.escrow.providerBalances}`,
    ),
    row('    contracts', `${r.escrow.contracts} ${JSON.stringify(r.escrow.byState)}`),
    row('    settled twice', r.escrow.settledTwice.length),
    row('    active after drain (must be 0)', r.escrow.openAfterDrain.length),
    row('    conserved', r.escrow.conserved ? 'yes' : 'NO'),
    '',
    ...r.warnings.map((w) => `warning: ${w}`),
    r.ok ? 'OK: no job lost, escrow conserved' : `FAILED:\n${r.problems.map((p) => `  - ${p}`).join('\n')}`,
  ]
  return lines.join('\n')
}
