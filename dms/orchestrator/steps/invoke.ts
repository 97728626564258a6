/**
 * The `invoking` step: grant the provider the job's input blobs (and sign it a delegated grant for
 * each workflow hand-off), then send the invocation with the
 * signed contract and the contract-db's proof; the provider answers with its allocation id.
 * Spec: specs/protocol.md ("Invocation"), specs/data-plane.md.
 */
import { memberAsked } from '../job-spec-members.js'
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
        command: job.spec.command,
        env: job.spec.env,
        inputs,
        ...(job.spec.network === true ? { network: true } : {}),
        // A pod: each member's container and share (the provider checks them against its bid).
        ...(job.spec.members !== undefined
          ? {
              members: job.spec.members.map((m) => ({
                ...memberAsked(m),
                command: m.command,
                env: m.env,
                cpu: m.cpu,
                memoryBytes: m.memoryBytes,
              })),
            }
          : {}),
      },
      { timeoutMs: d.config.requestTimeoutMs, signal },
    )
    return { allocationId: reply.allocationId }
  }
}
