/**
 * The `running` step: wait for the provider's result, woken by each arrival. The provider is
 * dropped (PROVIDER_SILENT, a provider fault) when it is silent longer than the liveness timeout
 * (no update or heartbeat), or when no result came by the max duration plus a grace. Both
 * deadlines are absolute, counted from the record's `running` stamp and the last arrival, so a
 * job restored after a restart re-arms them where they were. Before a provider is dropped at
 * either deadline, it is asked for its result once (`/dms/job/result-again`): a requester
 * restarted after the result reached it but before it stored it (or down longer than the job's
 * result deadline) gets it back from the provider, which keeps it until settlement. Spec:
 * specs/state-machines.md.
 */
import { W } from '../../protocol/behaviours.js'
import type { JobResult } from '../../protocol/messages.js'
import type { JobRecord } from '../job-record.js'
import { JobFailure, type Step } from '../job-machine.js'
import type { StepDeps } from './deps.js'
import { winnerHandle } from './providers.js'

export type AwaitResultDeps = Pick<StepDeps, 'clock' | 'session' | 'config' | 'actor'> &
  Partial<Pick<StepDeps, 'log'>>

/** The result asked of the winner again; undefined when it has none for us or cannot be reached. */
async function askAgain(
  d: AwaitResultDeps,
  job: JobRecord,
  signal: AbortSignal,
): Promise<JobResult | undefined> {
  const contract = job.contract
  if (contract === undefined) return undefined
  const r = await d.actor
    .request(
      winnerHandle(d.session, job),
      W.resultAgain,
      { jobId: job.id, contractId: contract.terms.contractId },
      { timeoutMs: d.config.requestTimeoutMs, signal },
    )
    .catch((err: unknown) => {
      d.log?.warn(
        { jobId: job.id, err: err instanceof Error ? err.message : String(err) },
        'the result asked of the provider again did not come',
      )
      return undefined
    })
  signal.throwIfAborted()
  return r?.jobId === job.id && r.receipt.receipt.contractId === contract.terms.contractId ? r : undefined
}

export function awaitResultStep(d: AwaitResultDeps): Step {
  const { clock, session } = d
  return async (job, signal) => {
    // A bid for a later start runs from its earliestStart on (the provider waits for its slot).
    const bid = job.bids.find((b) => b.bidId === job.winner?.bidId)
    const runningSince = Math.max(
      job.history.findLast((h) => h.state === 'running')?.at ?? clock.now(),
      bid?.earliestStart ?? 0,
    )
    const deadline = runningSince + job.spec.maxDurationSeconds * 1000 + d.config.resultGraceMs
    const liveness = d.config.livenessTimeoutMs
    let seen = clock.now()
    for (;;) {
      const before = session.lastSeen
      const wait = Math.min(deadline, seen + liveness) - clock.now()
      await session.until(() => session.result !== undefined || session.lastSeen !== before, wait, signal)
      if (session.result !== undefined) break
      if (session.lastSeen !== before) {
        seen = session.lastSeen
        continue
      }
      const late = clock.now() >= deadline
      if (late || clock.now() - seen >= liveness) {
        const again = await askAgain(d, job, signal)
        if (again !== undefined) {
          session.setResult(again)
          break
        }
        throw new JobFailure(
          'PROVIDER_SILENT',
          late
            ? `no result from the provider within ${Math.round((deadline - runningSince) / 1000)}s`
            : `provider silent for ${liveness} ms (no heartbeat)`,
        )
      }
    }
    return { result: session.result, updates: [...session.updates], lastSeenAt: session.lastSeen }
  }
}
