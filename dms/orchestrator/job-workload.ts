/**
 * What a job runs, from its spec: the workload every party carries whole (dms/workload/). A plain
 * job is a pod of one member (`main`) with the job's resources; a pod job's members keep their
 * names and shares. The spec's `image` is the artifact's name (an image, or `runtime:<path>`). Spec: specs/job-spec.md, specs/protocol.md ("Invocation").
 */
import { artifactOfName } from '../workload/artifact-name.js'
import { memberOf, singleMemberOf, type Workload } from '../workload/workload.js'
import type { JobSpec } from './job-spec.js'

/** The workload of a checked job spec. */
export function workloadOfJob(spec: JobSpec): Workload {
  if (spec.members !== undefined) return { members: spec.members.map(memberOf) }
  return { members: [singleMemberOf(artifactOfName(spec.image), spec, spec.resources, spec.gpu)] }
}
