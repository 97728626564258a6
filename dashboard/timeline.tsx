/** A job's journey: the state diagram with the path it took highlighted, then each step's time. */
import { time, type JobView } from './types.js'

/** The way a job goes when all is well, and the states off it (specs/state-machines.md). */
const MAIN = [
  'bidding',
  'selecting',
  'contracting',
  'invoking',
  'running',
  'verifying',
  'settling',
  'completed',
] as const
// `requesting`: the job request, only for a provider that wants the lock before the contract.
const SIDE = ['scheduled', 'queued', 'requesting', 'retrying', 'cancelling', 'cancelled', 'failed'] as const

export function Timeline({ job }: { job: JobView }) {
  const h = job.record.history
  const seen = new Set<string>(h.map((x) => x.state))
  const node = (s: (typeof MAIN)[number] | (typeof SIDE)[number]) => (
    <li class={`${seen.has(s) ? 'seen' : ''} ${job.state === s ? 'now' : ''}`} data-state={s}>
      {s}
    </li>
  )
  return (
    <section id="timeline">
      <h2>Journey</h2>
      <ol class="diagram main">{MAIN.map(node)}</ol>
      <ol class="diagram side">{SIDE.map(node)}</ol>
      <table>
        <thead>
          <tr>
            <th>State</th>
            <th>At (UTC)</th>
            <th>For</th>
          </tr>
        </thead>
        <tbody>
          {h.map((x, i) => (
            <tr data-step={x.state}>
              <td>{x.state}</td>
              <td class="mono">{time(x.at)}</td>
              <td>{i + 1 < h.length ? `${h[i + 1].at - x.at} ms` : ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  )
}
