/**
 * A pod's containers (specs/executor.md, "Pods"): the checks on its members before anything is
 * created, and each member's own run spec (its image, command, env, network and share of the
 * resources; the pod's timeout, quota, pids limit and inputs).
 */
import type { ExecutionSpec, PodMember } from '../executor.js'
import { InvalidSpecError } from '../errors.js'
import { MAX_POD_MEMBERS, MIN_POD_MEMBERS, POD_MEMBER_NAME } from '../../workload/run-rules.js'
import { validateSpec } from './container-config.js'

/** Where each member sees the pod's shared scratch folder. */
export const POD_TARGET = '/pod'

/** The members of a pod spec; throws InvalidSpecError (with a `members[i].field` path) if wrong. */
export function validatePod(spec: ExecutionSpec): PodMember[] {
  const members = spec.members ?? []
  if (members.length < MIN_POD_MEMBERS || members.length > MAX_POD_MEMBERS) {
    throw new InvalidSpecError('members', `must hold ${MIN_POD_MEMBERS} to ${MAX_POD_MEMBERS} members`)
  }
  if ((spec.gpus ?? 0) !== 0) throw new InvalidSpecError('gpus', 'must be 0 in a pod')
  const seen = new Set<string>()
  let cpu = 0
  let memoryBytes = 0
  members.forEach((m, i) => {
    if (typeof m.name !== 'string' || !POD_MEMBER_NAME.test(m.name)) {
      throw new InvalidSpecError(
        `members[${i}].name`,
        'must be 1-64 of A-Z a-z 0-9 _ . - (starting with a letter or digit)',
      )
    }
    if (seen.has(m.name)) throw new InvalidSpecError(`members[${i}].name`, `repeats "${m.name}"`)
    seen.add(m.name)
    try {
      validateSpec(memberSpec(spec, m))
    } catch (err) {
      if (err instanceof InvalidSpecError) {
        throw new InvalidSpecError(`members[${i}].${err.field}`, err.problem)
      }
      throw err
    }
    cpu += m.cpu
    memoryBytes += m.memoryBytes
  })
  if (Math.abs(cpu - spec.cpu) > 1e-9) {
    throw new InvalidSpecError('cpu', `must be the members' sum (${cpu})`)
  }
  if (memoryBytes !== spec.memoryBytes) {
    throw new InvalidSpecError('memoryBytes', `must be the members' sum (${memoryBytes})`)
  }
  return members
}

/** The run spec of one member: its own program and share, the pod's limits and inputs. */
export function memberSpec(spec: ExecutionSpec, member: PodMember): ExecutionSpec {
  const { members: _members, ...pod } = spec
  return {
    ...pod,
    image: member.image,
    command: member.command,
    ...(member.env !== undefined ? { env: member.env } : { env: {} }),
    network: member.network === true,
    cpu: member.cpu,
    memoryBytes: member.memoryBytes,
  }
}
