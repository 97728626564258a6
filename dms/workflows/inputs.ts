/**
 * A workflow's own inputs (each task's `job.inputs`), made blobs when it is posted: a blob named by
 * `sha256` must be on this node, and inline content is stored, so the workflow record (written on
 * every transition) holds ids, never content. Everything is checked before the first blob is stored.
 */
import type { BlobStore } from '../blobs/store.js'
import type { InputSpec } from '../orchestrator/job-spec.js'
import { InvalidWorkflowError, type Workflow } from './document.js'

export async function storeTaskInputs(store: BlobStore, workflow: Workflow): Promise<Workflow> {
  for (const [i, t] of workflow.tasks.entries())
    for (const [j, f] of (t.job.inputs ?? []).entries())
      if (f.sha256 !== undefined && !(await store.has(f.sha256)))
        throw new InvalidWorkflowError(
          `tasks.${i}.job.inputs.${j}.sha256`,
          `blob ${f.sha256} is not on this node: upload it first with PUT /v1/blobs`,
        )
  const tasks = []
  for (const t of workflow.tasks) {
    const inputs: InputSpec[] = []
    for (const f of t.job.inputs ?? []) {
      if (f.contentBase64 === undefined) {
        inputs.push(f)
        continue
      }
      const data = Buffer.from(f.contentBase64, 'base64')
      inputs.push({ path: f.path, sha256: await store.put(data), size: data.length })
    }
    tasks.push(t.job.inputs === undefined ? t : { ...t, job: { ...t.job, inputs } })
  }
  return { ...workflow, tasks }
}
