/**
 * FAULT INJECTION, for the restore tests only (specs/state-machines.md, "Fault injection"): when
 * the environment variable `DMS_FAULT_KILL_IN_STATE` (read by the process entry: dms/test-hooks.ts)
 * names a job state, the requester process
 * SIGKILLs itself right after a job posted by this process (not one restored at its start) enters
 * that state and has it stored, so a test can restart it on the same data dir and show that the
 * restore is idempotent in that state. Installed
 * when the orchestrator is built; no config field or flag sets it, and unset (every production
 * setup) it installs nothing.
 */
import type { JobState } from './job-record.js'
import type { JobStore } from './job-store.js'

export const FAULT_KILL_ENV = 'DMS_FAULT_KILL_IN_STATE'

/** The states a kill may be injected at: the live ones a requester can be stopped in. */
const KILLABLE: readonly JobState[] = [
  'bidding',
  'contracting',
  'invoking',
  'running',
  'verifying',
  'settling',
]

/** Installs the kill point at `state` when one is given; returns the state it kills at, if any. */
export function installFaultKill(
  store: Pick<JobStore, 'onChange'>,
  state: string | undefined,
  kill: () => void = () => process.kill(process.pid, 'SIGKILL'),
  now: () => number = Date.now,
): JobState | undefined {
  if (state === undefined || state === '') return undefined
  if (!(KILLABLE as readonly string[]).includes(state))
    throw new Error(`${FAULT_KILL_ENV}=${state}: not one of ${KILLABLE.join(', ')}`)
  // Only jobs posted by this process: a job restored at start goes on undisturbed.
  const since = now()
  store.onChange((job) => {
    if (job.state === state && job.record.createdAt >= since) kill()
  })
  return state as JobState
}
