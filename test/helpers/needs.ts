import { needsOf, type WorkloadNeeds } from '../../dms/workload/needs.js'
import { memberOf, singleMemberOf } from '../../dms/workload/workload.js'

/** A plain job's needs (one member, `main`), as a requester's bid request states them. */
export function plainNeeds(
  image: string,
  r: { cpu: number; memoryBytes: number; diskBytes?: number; gpus?: number },
  network?: boolean,
): WorkloadNeeds {
  const resources = { diskBytes: 0, gpus: 0, ...r }
  return needsOf({ members: [singleMemberOf(image, { command: ['run'], env: {}, network }, resources)] })
}

/** A pod's needs: each member with `share` of the resources, as a requester states them. */
export function podNeeds(
  members: Array<{ name: string; image: string; network?: boolean }>,
  share: { cpu: number; memoryBytes: number },
): WorkloadNeeds {
  return needsOf({ members: members.map((m) => memberOf({ ...m, command: ['run'], env: {}, ...share })) })
}
