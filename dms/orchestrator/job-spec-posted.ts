/**
 * A stored job spec (`JobSpec`, what `GET /v1/jobs/:id` shows under `spec`) written back in the
 * form `POST /v1/jobs` takes (specs/job-spec.md), so that a spec read back can be posted again:
 * `parseJobSpec(postedSpecOf(s))` gives `s` again (apart from inputs' sizes, which the node adds).
 */
import type { JobSpec, JobSpecInput } from './job-spec.js'
import { postedMember } from './job-spec-members.js'
import { postingOf } from '../workload/workload.js'
import { runtimeOfName } from '../workload/artifact-name.js'

/** A container's artifact name as posted: `runtime` for a runtime's, else `image`. */
function artifactPosting(name: string): { image: string } | { runtime: string } {
  const runtime = runtimeOfName(name)
  return runtime !== undefined ? { runtime } : { image: name }
}

export function postedSpecOf(s: JobSpec): JobSpecInput {
  const { allow, deny, direct, gossipFallback } = s.providers
  const providers = {
    ...(allow.length > 0 ? { allow } : {}),
    ...(deny.length > 0 ? { deny } : {}),
    ...(direct !== undefined && direct.length > 0 ? { direct, gossipFallback: gossipFallback ?? false } : {}),
  }
  return {
    ...(s.name !== undefined ? { name: s.name } : {}),
    // A pod has only its members (and its disk); a container has its own fields.
    ...(s.members !== undefined
      ? {
          members: s.members.map(postedMember),
          ...(s.resources.diskBytes > 0 ? { resources: { disk: s.resources.diskBytes } } : {}),
        }
      : {
          ...artifactPosting(s.image),
          ...postingOf(s),
          resources: {
            cpu: s.resources.cpu,
            memory: s.resources.memoryBytes,
            ...(s.resources.diskBytes > 0 ? { disk: s.resources.diskBytes } : {}),
            ...(s.resources.gpus > 0 ? { gpu: s.resources.gpus } : {}),
            ...(s.gpu?.model !== undefined ? { gpuModel: s.gpu.model } : {}),
            ...(s.gpu?.minMemoryBytes !== undefined ? { gpuMemory: s.gpu.minMemoryBytes } : {}),
          },
          ...(s.network === true ? { network: true } : {}),
        }),
    maxDuration: s.maxDurationSeconds,
    maxPrice: s.maxPrice,
    // Stored inputs are blobs on the node that posted them (a hand-off's `source` is a workflow's).
    ...(s.inputs !== undefined && s.inputs.length > 0
      ? {
          inputs: s.inputs.map((f) =>
            f.sha256 !== undefined
              ? { path: f.path, sha256: f.sha256 }
              : { path: f.path, contentBase64: f.contentBase64 ?? '' },
          ),
        }
      : {}),
    retries: s.retries,
    ...(Object.keys(providers).length > 0 ? { providers } : {}),
    ...(s.queueTimeoutSeconds !== undefined ? { queueTimeout: s.queueTimeoutSeconds } : {}),
    ...(s.startAt !== undefined ? { startAt: new Date(s.startAt).toISOString() } : {}),
    ...(s.startBy !== undefined
      ? { startBy: 'at' in s.startBy ? new Date(s.startBy.at).toISOString() : `${s.startBy.withinSeconds}s` }
      : {}),
    ...(s.retryPolicy !== undefined
      ? {
          retryPolicy: {
            attempts: s.retryPolicy.attempts,
            ...(s.retryPolicy.backoffSeconds > 0 ? { backoff: s.retryPolicy.backoffSeconds } : {}),
            on: s.retryPolicy.on,
          },
        }
      : {}),
    ...(s.queue !== undefined ? { queue: s.queue } : {}),
  }
}

/**
 * The spec in a document that may be a job as `dms job status --json` prints it (an object with
 * `id`, `history` and a `spec`): its spec in the posted form, without its queue (as a rerun: the
 * queue may have ended). Any other document is returned as is.
 */
export function specOfDocument(doc: unknown): unknown {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return doc
  const d = doc as { id?: unknown; history?: unknown; spec?: unknown }
  if (typeof d.id !== 'string' || !Array.isArray(d.history) || typeof d.spec !== 'object' || d.spec === null)
    return doc
  const spec = postedSpecOf(d.spec as JobSpec)
  delete spec.queue
  return spec
}
