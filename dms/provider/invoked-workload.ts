/**
 * An invocation's workload checked against what this provider bid on (specs/protocol.md,
 * "Invocation"; specs/job-spec.md, "Pods"): one member for a plain job, with the contract's image
 * and resources, or the members the bid request named (names, images, network, in order) with
 * shares that add up to the contract's resources; network only where this provider allows it. The
 * workload's own fields were checked at decode (`workloadProblem`). A forged or changed workload
 * is refused before anything runs.
 */
import type { Contracted } from '../contracts/terms.js'
import { workloadProblem } from '../workload/check.js'
import type { WorkloadNeeds } from '../workload/needs.js'
import { artifactName } from '../workload/artifact-name.js'
import { imageOf, workloadTotals, type Workload } from '../workload/workload.js'
import { memberNetworkRefused, NETWORK_REFUSED } from './capability.js'

/** Why the invoked workload does not match the bid request and the terms, or undefined. */
export function invokedWorkloadProblem(
  w: Workload,
  needs: WorkloadNeeds,
  terms: Pick<Contracted, 'resources' | 'image'>,
  allowNetwork: boolean,
): string | undefined {
  const bad = workloadProblem(w)
  if (bad !== undefined) return `workload.${bad.field} ${bad.problem}`
  const r = terms.resources
  // The bid request's needs name one member for a plain job, each of a pod's 2..8 for a pod.
  const asked = needs.members.length > 1 ? needs.members : undefined
  const members = w.members
  if (asked === undefined) {
    if (members.length !== 1) return 'workload: the bid request was for one container'
    const [m] = members
    // The terms name the artifact as the bid did: an image's reference, or `runtime:<path>`.
    if (artifactName(m.artifact) !== terms.image)
      return "workload.members.0.artifact is not the contract's image"
    // The bid request may not have said: the workload is what the container gets.
    if (m.network === 'outbound' && !allowNetwork) return NETWORK_REFUSED
    const t = workloadTotals(w)
    if (
      t.cpu !== r.cpu ||
      t.memoryBytes !== r.memoryBytes ||
      t.diskBytes !== r.diskBytes ||
      t.gpus !== r.gpus
    )
      return "workload.members.0.resources are not the contract's resources"
    return undefined
  }
  if (members.length !== asked.length) return `workload: the bid request named ${asked.length} members`
  if (terms.image !== imageOf(asked[0])) return "the contract's image is not the first member's"
  for (const [i, m] of members.entries()) {
    const at = `workload.members.${i}`
    if (m.name !== asked[i].name)
      return `${at}.name is not the bid request's ${JSON.stringify(asked[i].name)}`
    if (imageOf(m) !== imageOf(asked[i])) return `${at}.artifact is not the bid request's image`
    if (m.network !== asked[i].network) return `${at}.network is not the bid request's`
    if (m.network === 'outbound' && !allowNetwork) return memberNetworkRefused(m.name)
    if (m.resources.gpus !== undefined || (m.resources.diskBytes ?? 0) !== 0)
      return `${at}.resources: a pod's member has no GPUs or disk of its own`
  }
  // Added in order from 0, as the requester and the executor add them.
  const t = workloadTotals(w)
  if (Math.abs(t.cpu - r.cpu) > 1e-9 || t.memoryBytes !== r.memoryBytes)
    return `the members' cpu ${t.cpu} and memory ${t.memoryBytes} do not add up to the contract's ${r.cpu} and ${r.memoryBytes}`
  if (r.gpus !== 0) return 'a pod has no GPUs'
  return undefined
}
