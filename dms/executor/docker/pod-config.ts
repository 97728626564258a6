/**
 * A pod's containers (specs/executor.md, "Pods"): a workload of 2..8 members, each its own
 * container with its image, command, env, network and share of the resources; the pod's timeout,
 * quota, pids limit and inputs shared. What the Docker engine cannot give a pod is refused here.
 */
import type { ExecutionSpec, WorkloadMember } from '../executor.js'
import { InvalidSpecError } from '../errors.js'

/** Where each member sees the pod's shared scratch folder. */
export const POD_TARGET = '/pod'

/**
 * The members of a pod spec (validateSpec has checked the workload); throws InvalidSpecError
 * (with a `workload.members.i.field` path) for what a pod cannot have.
 */
export function validatePod(spec: ExecutionSpec): WorkloadMember[] {
  const members = spec.workload.members
  for (const [i, m] of members.entries()) {
    if (m.resources.gpus !== undefined)
      throw new InvalidSpecError(`workload.members.${i}.resources.gpus`, 'must be absent in a pod')
  }
  return members
}
