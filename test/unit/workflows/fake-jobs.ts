/**
 * A fake of the orchestrator's jobs port for the workflow runner's tests (the orchestrator's journey
 * is covered on its own; here only the states the runner sees matter).
 */
import type { JobSpec } from '../../../dms/orchestrator/job-spec.js'
import type { WorkflowJob, WorkflowJobs } from '../../../dms/workflows/runner.js'

/** A fake of the orchestrator's jobs port: jobs change state only when the test says. */
export class FakeJobs implements WorkflowJobs {
  readonly jobs = new Map<string, WorkflowJob & { spec: JobSpec }>()
  readonly postCount = new Map<string, number>()
  readonly cancelled: string[] = []
  private readonly fns = new Set<(j: WorkflowJob) => void>()
  post(spec: JobSpec, id: string) {
    this.postCount.set(id, (this.postCount.get(id) ?? 0) + 1)
    const existing = this.jobs.get(id)
    if (existing !== undefined) return Promise.resolve(existing)
    const job = { state: 'bidding', record: { id }, spec }
    this.jobs.set(id, job)
    this.fns.forEach((f) => f(job))
    return Promise.resolve(job)
  }
  get(id: string) {
    return Promise.resolve(this.jobs.get(id))
  }
  cancel(id: string) {
    this.cancelled.push(id)
    setImmediate(() => this.set(id, 'cancelled'))
    return Promise.resolve()
  }
  onChange(fn: (j: WorkflowJob) => void) {
    this.fns.add(fn)
    return () => this.fns.delete(fn)
  }
  readonly fetched: string[] = []
  /** The files `outputs` answers for a job (none unless set). */
  readonly outputFiles = new Map<string, Array<{ path: string; sha256: string; size: number }>>()
  outputs(id: string) {
    this.fetched.push(id)
    return Promise.resolve({ jobId: id, files: this.outputFiles.get(id) ?? [], archive: null })
  }
  readonly released: string[] = []
  /** Set to make the next release fail (a provider that does not answer). */
  releaseFails = false
  readonly refused: string[] = []
  /** Called after each release asked, answered or not. */
  onRelease = () => {}
  release(id: string) {
    setImmediate(() => this.onRelease())
    if (this.releaseFails) {
      this.refused.push(id)
      return Promise.reject(new Error('no answer'))
    }
    this.released.push(id)
    return Promise.resolve(true)
  }
  set(
    id: string,
    state: string,
    error?: { code: string; message: string },
    more: Partial<WorkflowJob['record']> = {},
  ) {
    const job = this.jobs.get(id)!
    job.state = state
    job.record = { ...job.record, ...more, ...(error !== undefined ? { error } : {}) }
    this.fns.forEach((f) => f(job))
  }
}
