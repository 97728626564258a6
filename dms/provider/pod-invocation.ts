/**
 * A pod's invocation checked against what this provider bid on (specs/job-spec.md, "Pods"): the
 * members the bid request named (names, images, network, in order), shares that add up to the
 * contract's resources, the executor's rules for each member's command and env, and network only
 * where this provider allows it. A forged or changed invocation is refused before anything runs.
 */
import type { ContractTerms } from '../contracts/model.js'
import type { BidRequest, Invocation } from '../protocol/messages.js'
import { commandProblem, cpuProblem, envProblem, MIN_MEMORY_BYTES } from '../workload/run-rules.js'
import { memberNetworkRefused } from './capability.js'

/** Why the invocation's members (or their absence) do not match the bid and the terms, or undefined. */
export function podInvocationProblem(
  inv: Invocation,
  request: Pick<BidRequest, 'members'>,
  terms: Pick<ContractTerms, 'resources' | 'image'>,
  allowNetwork: boolean,
): string | undefined {
  const asked = request.members
  const members = inv.members
  if (asked === undefined)
    return members === undefined ? undefined : 'members: the bid request was for one container'
  if (!Array.isArray(members) || members.length !== asked.length)
    return `members: the bid request named ${asked.length} members`
  if (inv.command.length > 0 || Object.keys(inv.env ?? {}).length > 0 || inv.network !== undefined)
    return 'a pod has no command, env or network of its own: each member has its own'
  if (terms.image !== asked[0].image) return "the contract's image is not the first member's"
  let cpu = 0
  let memoryBytes = 0
  for (const [i, m] of members.entries()) {
    const at = `members[${i}]`
    if (m.name !== asked[i].name)
      return `${at}.name is not the bid request's ${JSON.stringify(asked[i].name)}`
    if (m.image !== asked[i].image) return `${at}.image is not the bid request's`
    if ((m.network === true) !== (asked[i].network === true)) return `${at}.network is not the bid request's`
    if (m.network === true && !allowNetwork) return memberNetworkRefused(m.name)
    const cmd = commandProblem(m.command)
    if (cmd !== undefined) return `${at}.command[${cmd.index}] ${cmd.problem}`
    const env: unknown = m.env
    if (typeof env !== 'object' || env === null || Array.isArray(env)) return `${at}.env must be an object`
    const bad = envProblem(env as Record<string, unknown>)
    if (bad !== undefined) return `${at}.env ${JSON.stringify(bad.name.slice(0, 64))} ${bad.problem}`
    const cpuIssue = cpuProblem(m.cpu)
    if (cpuIssue !== undefined) return `${at}.cpu ${cpuIssue}`
    if (!Number.isSafeInteger(m.memoryBytes) || m.memoryBytes < MIN_MEMORY_BYTES)
      return `${at}.memoryBytes must be an integer of at least ${MIN_MEMORY_BYTES}`
    // Added in order from 0, as the requester and the executor add them.
    cpu += m.cpu
    memoryBytes += m.memoryBytes
  }
  const r = terms.resources
  if (Math.abs(cpu - r.cpu) > 1e-9 || memoryBytes !== r.memoryBytes)
    return `the members' cpu ${cpu} and memory ${memoryBytes} do not add up to the contract's ${r.cpu} and ${r.memoryBytes}`
  if (r.gpus !== 0) return 'a pod has no GPUs'
  return undefined
}
