/**
 * The provider's machine and offer (free, reserved, locked, allocated as one bar per resource),
 * its allocations (running ones with their usage so far, ended ones with the usage their receipt
 * stated), declines by reason, and earnings: what this provider earned, and apart from it what
 * went back to the requesters. Reloaded on each allocation event.
 */
import { useEffect } from 'preact/hooks'
import { api } from './api.js'
import { usePainted } from './first-paint.js'
import { useLive } from './live.js'
import { short, time } from './types.js'

type Amounts = { cpu: number; memoryBytes: number; diskBytes: number; gpus: number }
interface Resources {
  status: string
  onboarded: Amounts
  free: Amounts
  reserved: Amounts
  locked: Amounts
  allocated: Amounts
  machine: { hostname?: string; cpu?: { model?: string; cores?: number } }
}
interface Allocation {
  allocationId: string
  jobId: string
  requester: string
  state: string
  history: Array<{ state: string; at: number }>
  /** So far while it runs (with `costSoFar`); once it ran, as its receipt stated. */
  usage?: { cpuSeconds: number; memoryBytes: number; wallSeconds: number; logBytes?: number }
  costSoFar?: number
  payment?: { escrow: number; status: string; paid?: number; refunded?: number }
}
interface Earnings {
  paid: number
  claimed: number
  refunded: number
  outstanding: number
  contracts: { settled: number; claimed: number; open: number }
}
interface Info {
  declines?: Record<string, number>
  bidRequestsIgnored?: Record<string, number>
  mode?: { mode: string }
}

const PARTS = ['allocated', 'locked', 'reserved', 'free'] as const
const MiB = 1024 * 1024
const USAGE_REFRESH_MS = 5000
const amount = (k: keyof Amounts, v: number) =>
  k === 'cpu' ? `${Math.round(v * 100) / 100} cpu` : k === 'gpus' ? `${v} gpu` : `${Math.round(v / MiB)} MiB`

function Bar({ r, k }: { r: Resources; k: keyof Amounts }) {
  const total = r.onboarded[k]
  if (total <= 0) return null
  return (
    <div class="bar-row" data-resource={k}>
      <span class="bar-label">
        {k === 'memoryBytes' ? 'memory' : k === 'diskBytes' ? 'disk' : k} ({amount(k, total)})
      </span>
      <div class="bar">
        {PARTS.map((p) => (
          <span
            class={`seg seg-${p}`}
            data-part={p}
            title={`${p}: ${amount(k, r[p][k])}`}
            style={{ width: `${(100 * r[p][k]) / total}%` }}
          />
        ))}
      </div>
    </div>
  )
}

export function ProviderPage() {
  const { data, error, reload } = useLive(
    async () =>
      Promise.all([
        api<Resources>('GET', '/v1/resources'),
        api<{ allocations: Allocation[] }>('GET', '/v1/allocations'),
        api<Earnings>('GET', '/v1/earnings'),
        api<Info>('GET', '/v1/info'),
      ]),
    ['allocation'],
  )
  // Usage of a running allocation has no event: while one runs, it is read again every 5 s.
  const running = data?.[1].allocations.some((a) => a.costSoFar !== undefined) ?? false
  useEffect(() => {
    if (!running) return
    const t = setInterval(reload, USAGE_REFRESH_MS)
    return () => clearInterval(t)
  }, [running, reload])
  usePainted(data !== undefined || error !== undefined)
  if (data === undefined) return <p class={error ? 'error' : ''}>{error ?? 'Loading…'}</p>
  const [r, { allocations }, e, info] = data
  const declines = Object.entries(info.declines ?? {}).sort((a, b) => b[1] - a[1])
  const ignored = Object.entries(info.bidRequestsIgnored ?? {}).sort((a, b) => b[1] - a[1])
  return (
    <article id="provider">
      <h1>
        Provider <span class="state">{info.mode?.mode ?? r.status}</span>
      </h1>
      <div class="grid">
        <section id="offer">
          <h2>Offer</h2>
          {r.status !== 'onboarded' && <p>Not onboarded ({r.status}).</p>}
          {(['cpu', 'memoryBytes', 'diskBytes', 'gpus'] as const).map((k) => (
            <Bar r={r} k={k} />
          ))}
          <p class="legend">
            {PARTS.map((p) => (
              <span>
                <i class={`seg seg-${p}`} /> {p}
              </span>
            ))}
          </p>
        </section>
        <section id="earnings">
          <h2>Earnings</h2>
          <dl>
            <dt>Earned</dt>
            <dd>{e.paid}</dd>
            <dt>Claimed</dt>
            <dd>{e.claimed}</dd>
            <dt title="the part of the escrow the contract-db gave back to the requesters">
              Returned to requesters
            </dt>
            <dd>{e.refunded}</dd>
            <dt>Outstanding</dt>
            <dd>{e.outstanding}</dd>
            <dt>Contracts</dt>
            <dd>
              {e.contracts.settled} settled · {e.contracts.claimed} claimed · {e.contracts.open} open
            </dd>
          </dl>
        </section>
      </div>
      <section id="allocations">
        <h2>Allocations</h2>
        {allocations.length === 0 ? (
          <p>None yet.</p>
        ) : (
          <div class="scroll">
            <table>
              <thead>
                <tr>
                  <th>Allocation</th>
                  <th>State</th>
                  <th>Requester</th>
                  <th>Started</th>
                  <th>CPU s</th>
                  <th>Memory</th>
                  <th>Wall s</th>
                  <th>Cost so far</th>
                  <th>Payment</th>
                  <th>Earned</th>
                  <th>Returned</th>
                </tr>
              </thead>
              <tbody>
                {allocations.map((a) => (
                  <tr data-allocation={a.allocationId} data-job={a.jobId} data-state={a.state}>
                    <td class="mono">{a.allocationId.slice(0, 8)}</td>
                    <td>
                      <span class={`state s-${a.state}`}>{a.state}</span>
                    </td>
                    <td class="mono">{short(a.requester)}</td>
                    <td class="mono">{time(a.history[0]?.at)}</td>
                    <td>{a.usage?.cpuSeconds.toFixed(2) ?? '-'}</td>
                    <td>{a.usage === undefined ? '-' : `${Math.round(a.usage.memoryBytes / MiB)} MiB`}</td>
                    <td>{a.usage?.wallSeconds.toFixed(1) ?? '-'}</td>
                    <td>{a.costSoFar ?? '-'}</td>
                    <td>{a.payment?.status ?? '-'}</td>
                    <td>{a.payment?.paid ?? '-'}</td>
                    <td>{a.payment?.refunded ?? '-'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      <section id="declines">
        <h2>Declines by reason</h2>
        {declines.length === 0 && ignored.length === 0 ? (
          <p>None.</p>
        ) : (
          <table>
            <tbody>
              {declines.map(([reason, n]) => (
                <tr data-reason={reason}>
                  <td>{reason}</td>
                  <td>{n}</td>
                </tr>
              ))}
              {ignored.map(([reason, n]) => (
                <tr data-ignored={reason}>
                  <td>ignored: {reason}</td>
                  <td>{n}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </article>
  )
}
