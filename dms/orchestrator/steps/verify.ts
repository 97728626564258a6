/**
 * The `verifying` step: check the provider's signed receipt (well formed, for this contract and
 * job, signed by the provider, and claiming no more wall time than the requester saw the run
 * take) and fetch and check its outputs file by file (data-plane.ts). A failed check of usage or
 * outputs is kept in the record's `verification` (the settlement then refunds the escrow); a
 * malformed result, receipt included, makes this step throw, which is the provider's fault too
 * (terminate.ts). Outputs not fetched by the deadline (size at `outputsPace`, from the
 * `verifying` stamp) fail the check.
 * Spec: specs/protocol.md ("Verification"), specs/data-plane.md.
 */
import { transferBudgetMs } from '../../blobs/transfer.js'
import { verifyDoc } from '../../contracts/canonical.js'
import { checkReceipt } from '../../contracts/checks.js'
import { DOMAIN, type Receipt } from '../../contracts/model.js'
import { publicKeyOf } from '../../protocol/handles.js'
import type { JobResult } from '../../protocol/messages.js'
import type { JobRecord } from '../job-record.js'
import { JobFailure, type Step } from '../job-machine.js'
import type { StepDeps } from './deps.js'

export type VerifyDeps = Pick<StepDeps, 'log' | 'session' | 'blobs' | 'config' | 'clock'>

/**
 * What a receipt's wall time may exceed the run time the requester observed (from sending the
 * invocation to the result) by: the two clocks are the same node's, so only rounding.
 */
export const USAGE_SLACK_MS = 2000

/**
 * Why the receipt's usage cannot be true, or undefined: a provider signs its own receipt, and one
 * claiming more wall time than the run had would be paid for work it never did.
 */
export function usageProblem(job: JobRecord, receipt: Receipt | undefined, now: number): string | undefined {
  const wall = receipt?.usage?.wallSeconds
  if (typeof wall !== 'number') return undefined
  const invoked = [...job.history].reverse().find((h) => h.state === 'invoking')?.at
  if (invoked === undefined) return undefined
  const observedMs = Math.max(0, now - invoked)
  if (wall * 1000 <= observedMs + USAGE_SLACK_MS) return undefined
  return `the receipt claims ${wall} s of wall time, the run took at most ${observedMs / 1000} s`
}

/**
 * Why a result's `members` do not fit the job, or undefined: a pod's result lists every member of
 * its spec, in order, and says `completed` for the pod only when each member completed; one
 * container's result lists none.
 */
export function membersProblem(
  spec: ReadonlyArray<{ name: string }> | undefined,
  r: Pick<JobResult, 'members' | 'receipt'>,
): string | undefined {
  const got = r.members
  if (spec === undefined) return got === undefined ? undefined : 'it lists pod members for one container'
  if (got === undefined || got.length !== spec.length || got.some((m, i) => m.name !== spec[i].name))
    return `its members are not the pod's (${spec.map((m) => m.name).join(', ')})`
  if (r.receipt.receipt.status === 'completed' && got.some((m) => m.status !== 'completed'))
    return 'it says completed while a member did not complete'
  return undefined
}

export function verifyStep(d: VerifyDeps): Step {
  return async (job, signal) => {
    const r = job.result as JobResult
    const provider = job.winner?.provider as string
    // A receipt the contract-db would refuse (another contract or job, a bad status, not signed
    // by the provider) is a malformed result: settling on it would be refused and leave the
    // escrow locked, so the step throws and the contract is terminated for provider fault
    // (terminate.ts).
    const receiptSignatureOk = verifyDoc(
      publicKeyOf(provider),
      DOMAIN.receipt,
      r.receipt?.receipt,
      r.receipt?.signature ?? '',
    )
    const malformed =
      checkReceipt(r.receipt, job.contract!.terms) ??
      (receiptSignatureOk ? undefined : 'it is not signed by the provider')
    if (malformed !== undefined)
      throw new JobFailure('BAD_RECEIPT', `the provider's receipt is malformed: ${malformed}`)
    const members = membersProblem(job.spec.members, r)
    if (members !== undefined)
      throw new JobFailure('BAD_RECEIPT', `the provider's result is malformed: ${members}`)
    const usage = usageProblem(job, r.receipt?.receipt, d.clock.now())
    if (usage !== undefined) d.log.warn({ jobId: job.id, problem: usage }, 'receipt usage did not verify')
    // The outputs are fetched (one archive, in chunks) and checked file by file, by a deadline
    // counted from the `verifying` stamp, so a job restored after a restart does not start over.
    const since = job.history.findLast((h) => h.state === 'verifying')?.at ?? d.clock.now()
    const budgetMs = transferBudgetMs(r.archive?.size ?? 0, d.config.outputsPace)
    const outputs = await d.blobs.fetchOutputs(
      { peer: provider, addrs: d.session.providerAddrs.get(provider) ?? [] },
      r,
      {
        signal,
        timeoutMs: d.config.requestTimeoutMs,
        deadline: { at: since + budgetMs, clock: d.clock, budgetMs },
        diskBytes: job.spec.resources.diskBytes,
        // A workflow task whose outputs are handed on keeps them at its provider (its manifest is
        // checked here).
        download: job.spec.outputsStay !== true,
      },
    )
    if (!outputs.ok) d.log.warn({ jobId: job.id, reason: outputs.reason }, 'outputs did not verify')
    // Fetched and checked here: the provider need not keep its copy. Not after a failed check:
    // the contract-db fetches a rejected result's archive from the provider to check it
    // (specs/contract-db.md, "Rejections"). Not awaited: the provider deletes it at its deadline
    // anyway (specs/data-plane.md, "Archives kept by the provider").
    if (outputs.ok && job.spec.outputsStay !== true && r.archive !== undefined)
      void d.blobs
        .release?.(
          { peer: provider, addrs: d.session.providerAddrs.get(provider) ?? [] },
          r.archive.sha256,
          job.id,
        )
        .catch((err: unknown) => d.log.debug({ err, jobId: job.id }, 'archive release not answered'))
    return {
      verification: {
        outputsHashOk: outputs.ok,
        receiptSignatureOk,
        ...(outputs.ok ? {} : { outputsProblem: outputs.reason }),
        ...(usage === undefined ? {} : { usageOk: false, usageProblem: usage }),
      },
    }
  }
}
