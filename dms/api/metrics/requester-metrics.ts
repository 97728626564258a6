/**
 * The requester's metrics, counted at each stored change of a job (the orchestrator's change
 * listener): jobs by state, escrow locked, paid and refunded per contract, how long jobs take.
 * Names and labels: specs/rest-api.md, "Metrics".
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client'
import type { JobView } from '../ports.js'
import { mirroredCounter, readGauge, type Counts } from '../../metrics/counts.js'
import { StateTally, type Change } from '../../metrics/state-tally.js'

export interface RequesterSources {
  /** Bids not ranked, by reason (counted by the orchestrator as it judges each bid). */
  bidsIgnored(): Counts
  /** Declines not kept, by reason. */
  declinesIgnored(): Counts
  /** The job states a job never leaves. */
  finalStates: readonly string[]
  /** The usage so far of the jobs running now, summed (heartbeats; from memory). */
  liveUsage?: () => { cpuSeconds: number; memoryBytes: number }
}

/** Seconds from a job's post to its final state. */
const DURATION_BUCKETS = [1, 5, 15, 30, 60, 300, 900, 3600, 21600, 86400]

export class RequesterMetrics {
  /** Per job not yet final: the contracts whose escrow and settlement are counted. */
  private readonly tally: StateTally<Set<string>>
  private readonly escrow: Counter
  private readonly paid: Counter
  private readonly refunded: Counter
  private readonly duration: Histogram<'outcome'>
  private readonly final: ReadonlySet<string>

  constructor(registry: Registry, sources: RequesterSources) {
    const registers = [registry]
    const jobs = new Gauge({
      name: 'dms_jobs',
      help: "requester jobs by state (stored state; 'selecting' is transient and never stored)",
      labelNames: ['state'],
      registers,
    })
    this.final = new Set(sources.finalStates)
    this.tally = new StateTally(
      jobs,
      (s) => this.final.has(s),
      () => new Set<string>(),
    )
    const live = sources.liveUsage
    if (live !== undefined) {
      readGauge(
        registry,
        'dms_jobs_running_cpu_seconds',
        'cpu seconds used so far by the jobs running now, as their providers last reported',
        () => live().cpuSeconds,
      )
      readGauge(
        registry,
        'dms_jobs_running_memory_bytes',
        'memory peak so far of the jobs running now, summed, as their providers last reported',
        () => live().memoryBytes,
      )
    }
    mirroredCounter(
      registry,
      'dms_requester_bids_ignored_total',
      'bids not ranked, by reason: no or bad approval credential, another job, unsigned, other terms... (specs/protocol.md)',
      'reason',
      () => sources.bidsIgnored(),
    )
    mirroredCounter(
      registry,
      'dms_requester_declines_ignored_total',
      'declines not kept, by reason (as for bids)',
      'reason',
      () => sources.declinesIgnored(),
    )
    this.escrow = new Counter({
      name: 'dms_requester_escrow_locked_total',
      help: 'escrow the contract-db locked for this requester, summed over its contracts (micro-tokens)',
      registers,
    })
    this.paid = new Counter({
      name: 'dms_requester_paid_total',
      help: 'paid to providers at settlement (micro-tokens)',
      registers,
    })
    this.refunded = new Counter({
      name: 'dms_requester_refunded_total',
      help: 'refunded to this requester at settlement (micro-tokens)',
      registers,
    })
    this.duration = new Histogram({
      name: 'dms_job_duration_seconds',
      help: 'from a job posted to its final state, by outcome (completed, failed, cancelled)',
      labelNames: ['outcome'],
      buckets: DURATION_BUCKETS,
      registers,
    })
  }

  /** A job as stored now (every stored change of any job). */
  job(job: JobView): void {
    this.count(this.tally.observe(job.record.id, job.state), job, true)
  }

  /** Reads the stored jobs once, at start (jobs stored earlier, by an earlier process). */
  scan(list: () => Promise<JobView[]>): Promise<void> {
    return this.tally.scan(async (seed) => {
      for (const job of await list()) this.count(seed(job.record.id, job.state), job, false)
    })
  }

  /** Counts what this change brought: a contract's escrow, a settlement, the end of the job. */
  private count(change: Change<Set<string>> | undefined, { record: r }: JobView, live: boolean): void {
    if (change === undefined) return
    const counted = change.memo
    if (r.proof !== undefined && !counted.has(`escrow ${r.proof.contractId}`)) {
      counted.add(`escrow ${r.proof.contractId}`)
      this.escrow.inc(r.proof.escrowLocked)
    }
    // A provider fault's termination stays in its attempt; the current round's is `settlement`.
    for (const s of [...(r.attempts ?? []).map((a) => a.settlement), r.settlement]) {
      if (s === undefined || counted.has(`settled ${s.contractId}`)) continue
      counted.add(`settled ${s.contractId}`)
      this.paid.inc(s.paidToProvider)
      this.refunded.inc(s.refundedToRequester)
    }
    const ended = r.history[r.history.length - 1]
    // A job that ended here and now (not one read at start, nor one first seen already ended).
    if (live && change.from !== undefined && this.final.has(change.to) && ended !== undefined)
      this.duration.observe({ outcome: change.to }, Math.max(0, ended.at - r.createdAt) / 1000)
  }
}
