/** The record shapes the page shows, as the REST API answers them (specs/rest-api.md). */
export type { JobRecord, JobState } from '../dms/orchestrator/job-record.js'
import type { JobRecord } from '../dms/orchestrator/job-record.js'

/** A job as the page holds it: its state and stored record. */
export interface JobView {
  state: string
  record: JobRecord
}

/** `GET /v1/jobs/:id`: the record with its state. */
export type JobDetail = JobRecord & { state: string }

export const viewOf = (d: JobDetail): JobView => ({ state: d.state, record: d })

/** A row of `GET /v1/jobs`. */
export interface JobSummary {
  id: string
  name?: string
  state: string
  createdAt: number
  provider?: string
  image?: string
  price?: number
}

/** The row of a job (as `GET /v1/jobs` makes it: paid once settled, else the winning bid's total). */
export function summaryOf(d: JobDetail): JobSummary {
  const price = d.settlement?.paidToProvider ?? d.bids.find((b) => b.bidId === d.winner?.bidId)?.total
  return {
    id: d.id,
    name: d.spec.name,
    state: d.state,
    createdAt: d.createdAt,
    provider: d.winner?.provider,
    image: d.spec.image,
    price,
  }
}

/** The states a job ends in. */
export const FINAL = new Set(['completed', 'failed', 'cancelled'])

/** Milliseconds as "3 s", "4 min", "2 h", "5 d". */
export function age(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000))
  if (s < 60) return `${s} s`
  if (s < 3600) return `${Math.round(s / 60)} min`
  if (s < 86400) return `${Math.round(s / 3600)} h`
  return `${Math.round(s / 86400)} d`
}

/** A peer id shortened to its last 8 characters (as the CLI prints it). */
export const short = (peer: string | undefined) => (peer === undefined ? '-' : `…${peer.slice(-8)}`)

export const time = (ms: number | undefined) =>
  ms === undefined ? '-' : new Date(ms).toISOString().slice(11, 23)
