/**
 * The `invoking` step: grant the provider the job's input blobs (and sign it a delegated grant for
 * each workflow hand-off), then send the invocation with the
 * signed contract and the contract-db's proof; the provider answers with its allocation id.
 * Spec: specs/protocol.md ("Invocation"), specs/data-plane.md.
 */
import { workloadOfJob } from '../job-workload.js'
import type { ContractProof, SignedContract } from '../../contracts/model.js'
import { W } from '../../protocol/behaviours.js'
import type { JobInput } from '../data-plane.js'
import type { Step } from '../job-machine.js'
import type { StepDeps } from './deps.js'
import { winnerHandle } from './providers.js'

export type InvokeDeps = Pick<StepDeps, 'actor' | 'session' | 'blobs' | 'config'>

export function invokeStep(d: InvokeDeps): Step {
  return async (job, signal) => {
    const inputs = await d.blobs.grant(job.winner?.provider as string, (job.spec.inputs ?? []) as JobInput[])
    const reply = await d.actor.request(
      winnerHandle(d.session, job),
      W.invoke,
      {
        contract: job.contract as SignedContract,
        proof: job.proof as ContractProof,
        inputs,
        // What runs, whole: the provider checks it against its bid and the contract's terms.
        workload: workloadOfJob(job.spec),
      },
      { timeoutMs: d.config.requestTimeoutMs, signal },
    )
    return { allocationId: reply.allocationId }
  }
}
