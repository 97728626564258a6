/**
 * What a job runs, from its spec: the workload every party carries whole (dms/workload/). A plain
 * job is a pod of one member (`main`) with the job's resources; a pod job's members keep their
 * names and shares. Spec: specs/job-spec.md, specs/protocol.md ("Invocation").
 */
import { SINGLE_MEMBER, type NetworkPolicy, type Workload } from '../workload/workload.js'
import type { JobSpec } from './job-spec.js'

const policy = (network: boolean | undefined): NetworkPolicy => (network === true ? 'outbound' : 'none')

/** The workload of a checked job spec. */
export function workloadOfJob(spec: JobSpec): Workload {
  if (spec.members !== undefined) {
    return {
      members: spec.members.map((m) => ({
        name: m.name,
        artifact: { kind: 'image', ref: m.image },
        command: m.command,
        env: m.env,
        network: policy(m.network),
        resources: { cpu: m.cpu, memoryBytes: m.memoryBytes },
      })),
    }
  }
  const r = spec.resources
  return {
    members: [
      {
        name: SINGLE_MEMBER,
        artifact: { kind: 'image', ref: spec.image },
        command: spec.command,
        ...(spec.workdir !== undefined ? { workdir: spec.workdir } : {}),
        env: spec.env,
        network: policy(spec.network),
        resources: {
          cpu: r.cpu,
          memoryBytes: r.memoryBytes,
          ...(r.diskBytes > 0 ? { diskBytes: r.diskBytes } : {}),
          ...(r.gpus > 0 ? { gpus: { count: r.gpus } } : {}),
        },
      },
    ],
  }
}
