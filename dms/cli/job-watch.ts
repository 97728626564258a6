/**
 * `dms job status -w` and `dms job list -w` (watch.ts): printed again as jobs change, from the
 * node's `job` events. `job status -w` ends when the job ends; `job list -w` on Ctrl-C.
 */
import { FINAL, JOB_COLUMNS, jobListQuery, readJobPage, type JobListOptions } from './job.js'
import { resolveJobId } from './job-id.js'
import { jobStatusLines, readJob } from './job-status.js'
import { print, printData, printNote, printSafe } from './output.js'
import { rowStream } from './table.js'
import { changeFilter, watch } from './watch.js'

/** The job's status, then again each time what it shows changed, until the job ends. */
export async function jobStatusWatch(given: string, opts: { socket: string; json?: boolean }): Promise<void> {
  const id = await resolveJobId(opts.socket, given)
  const changed = changeFilter()
  let printed = false
  await watch({
    socket: opts.socket,
    kinds: ['job'],
    concerns: (e) => e.data.id === id,
    read: () => readJob(opts.socket, id),
    show: (job) => {
      const lines = opts.json ? [JSON.stringify(job)] : jobStatusLines(job)
      if (changed(lines.join('\n'))) {
        if (opts.json) printData(job)
        else {
          if (printed) print('')
          for (const l of lines) printSafe(l)
        }
        printed = true
      }
      return FINAL.has(job.state)
    },
  })
}

/**
 * The page of jobs, then each job of it that is new or changed, as a row (as `kubectl get -w`);
 * `--json`: the page, then each such job as its own document.
 */
export async function jobListWatch(opts: JobListOptions): Promise<void> {
  const query = await jobListQuery(opts)
  const rows = rowStream(JOB_COLUMNS, (j) => j.id)
  const json = new Map<string, string>()
  let first = true
  await watch({
    socket: opts.socket,
    kinds: ['job'],
    read: () => readJobPage(opts.socket, query),
    show: (page) => {
      if (opts.json) {
        for (const j of page.jobs) {
          const text = JSON.stringify(j)
          if (json.get(j.id) !== text && !first) printData(j)
          json.set(j.id, text)
        }
        if (first) printData(page)
      } else {
        if (first && page.jobs.length === 0) printNote('no jobs yet: watching')
        rows(page.jobs)
      }
      first = false
      return false
    },
  })
}
