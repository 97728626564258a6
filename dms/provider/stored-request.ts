/**
 * The bid request a provider keeps with each bid (`BidContext.request`), and the request as bid
 * records before protocol 4 kept it (image, resources, network and pod members copied field by
 * field), read as today's: its workload's needs (specs/protocol.md, "Bid request: the workload's
 * needs"). Called by `upgradeBid` (bid-store.ts) for records of version 3 and before.
 */
import type { BidRequest } from '../protocol/messages.js'
import type { Resources } from '../resources/types.js'
import { needsOf, type WorkloadNeeds } from '../workload/needs.js'
import { memberOf, singleMemberOf } from '../workload/workload.js'

/** The request without the requester's credential and funds proof (checked, never stored). */
export type StoredRequest = Omit<BidRequest, 'approval'>

/** A bid request as bid records up to version 3 kept it. */
export interface V3Request extends Omit<StoredRequest, 'workloadNeeds'> {
  resources: Resources
  image: string
  network?: boolean
  /** A pod's members (then `image` is the first's and `resources` the pod's total). */
  members?: Array<{ name: string; image: string; network?: boolean }>
}

/**
 * The needs a request of version 3 or before stated. A plain job is its one member with the
 * request's resources, as the requester's `workloadOfJob` makes it. A pod's request named no
 * member's share: each member is given the pod's total cpu and memory (a bound no share exceeds);
 * its invocation is checked against the contract's total, as before.
 */
function needsOfV3(r: V3Request): WorkloadNeeds {
  // The flat fields become a member the one way the workload declares (memberOf, singleMemberOf);
  // what it runs with is not in a request, and needsOf leaves it out.
  const run = { command: ['-'], env: {} }
  if (r.members !== undefined && r.members.length > 0) {
    const share = { cpu: r.resources.cpu, memoryBytes: r.resources.memoryBytes }
    return needsOf(
      { members: r.members.map((m) => memberOf({ ...m, ...run, ...share })) },
      r.resources.diskBytes,
    )
  }
  return needsOf({ members: [singleMemberOf(r.image, { ...run, network: r.network }, r.resources)] })
}

/** A stored request at today's shape: one of version 3 or before gets its needs. */
export function upgradeRequest(r: StoredRequest | V3Request): StoredRequest
export function upgradeRequest(r: StoredRequest | V3Request | undefined): StoredRequest | undefined
export function upgradeRequest(r: StoredRequest | V3Request | undefined): StoredRequest | undefined {
  if (r === undefined || 'workloadNeeds' in r) return r
  const { resources: _r, image: _i, network: _n, members: _m, ...kept } = r
  return { ...kept, workloadNeeds: needsOfV3(r) }
}
