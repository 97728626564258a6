/**
 * The `queued` step: a bid round found no usable bid and the job may still wait. It bids again
 * when a provider announces room that could fit it (capacity news, capacity-board.ts) or after a
 * backoff (queueRetryMinMs doubling per round, capped at queueRetryMaxMs), whichever is first; at
 * the queue deadline it fails QUEUE_TIMEOUT with every provider's latest decline. The deadline is
 * absolute (in the record), so a restored job waits only what is left.
 * Spec: specs/state-machines.md ("Scheduled and queued").
 */
import { delay } from '../../../actors/clock.js'
import { JobFailure, type Step } from '../job-machine.js'
import { queueDeadlineOf, queueTimeoutError } from '../job-rules.js'
import type { JobRecord } from '../job-record.js'
import type { StepDeps } from './deps.js'

export type WaitForCapacityDeps = Pick<StepDeps, 'clock' | 'capacity' | 'config'>

/**
 * The backoff before bid round `rounds + 1` when no capacity news comes: queueRetryMinMs doubling
 * per round, capped at queueRetryMaxMs, then spread over its upper half by the job id, so that
 * jobs queued together do not all ask again at the same instant (a provider's per-peer rate limit
 * drops such a burst silently). Deterministic: the same job and round always wait the same.
 */
export function queueBackoffMs(rounds: number, cfg: WaitForCapacityDeps['config'], jobId = ''): number {
  const base = Math.min(cfg.queueRetryMaxMs, cfg.queueRetryMinMs * 2 ** Math.min(Math.max(0, rounds - 1), 30))
  return Math.round(base / 2 + (base / 2) * spread(`${jobId}:${rounds}`))
}

/** A number in [0, 1) from `text` (FNV-1a). */
function spread(text: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0
  return h / 2 ** 32
}

const timedOut = (job: JobRecord): JobFailure => {
  const e = queueTimeoutError(job)
  return new JobFailure(e.code, e.message, { declines: e.declines })
}

export function waitForCapacityStep(d: WaitForCapacityDeps): Step {
  const { clock } = d
  return async (job, signal) => {
    const deadline = queueDeadlineOf(job)
    const left = deadline - clock.now()
    if (left <= 0) throw timedOut(job)
    const wait = Math.min(left, queueBackoffMs(job.queue?.rounds ?? 1, d.config, job.id))
    const done = new AbortController()
    const stop = () => done.abort()
    signal.addEventListener('abort', stop, { once: true })
    try {
      const wokenBy = await Promise.race([
        d.capacity.wait(job.id, job.spec.resources, done.signal),
        delay(wait, { clock, signal: done.signal }).then(() => 'backoff'),
      ])
      if (wokenBy === 'backoff' && clock.now() >= deadline) throw timedOut(job)
      return { queue: { ...(job.queue ?? { deadline, rounds: 0, declines: [] }), deadline, wokenBy } }
    } catch (err) {
      signal.throwIfAborted()
      throw err
    } finally {
      signal.removeEventListener('abort', stop)
      done.abort()
    }
  }
}
