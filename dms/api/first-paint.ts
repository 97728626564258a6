/**
 * The node dashboard's first paint (specs/dashboard.md, "First paint"): a summary of the node
 * rendered on the server into the page's HTML, so that what a browser shows before (or without)
 * the page's script is useful: a plain headless screenshot of the login link, a browser with
 * scripts off, a slow machine. Read from the same ports as the REST routes; every value from
 * outside (job names, images, peer ids, error messages) is escaped and cut short.
 */
import type { AllocationSummary, InfoReply } from './schemas.js'
import type { ApiPorts, JobView } from './ports.js'
import { priceOf } from './job-routes.js'
import { CELL_MAX, clockTime, esc, tally } from '../web/html.js'

/** The ports a first paint reads. */
export type FirstPaintPorts = Pick<ApiPorts, 'info' | 'jobs' | 'allocations' | 'peers'>

/** Rows of jobs and of allocations a first paint shows (the newest). */
export const FIRST_PAINT_ROWS = 20
/** Longest text a cell shows (dms/web/html.ts). */
export const FIRST_PAINT_CELL = CELL_MAX

const short = (peer: string | undefined) => (peer === undefined ? '-' : `…${esc(peer.slice(-8))}`)
const age = (ms: number) => {
  const s = Math.max(0, Math.round(ms / 1000))
  return s < 60
    ? `${s} s`
    : s < 3600
      ? `${Math.round(s / 60)} min`
      : s < 86400
        ? `${Math.round(s / 3600)} h`
        : `${Math.round(s / 86400)} d`
}
const MiB = 1024 * 1024

const failed = (what: string, err: unknown) =>
  `<p class="error">${esc(what)} could not be read: ${esc(err instanceof Error ? err.message : 'unknown error', 200)}</p>`

function jobsSection(jobs: JobView[], now: number): string {
  const rows = jobs
    .map((j) => {
      const r = j.record
      const price = priceOf(r)
      return (
        `<tr data-job="${esc(r.id)}" data-state="${esc(j.state)}"><td><a href="#/jobs/${esc(r.id)}">` +
        `${esc(r.spec.name ?? r.id.slice(0, 8))}</a></td><td><span class="state s-${esc(j.state)}">${esc(j.state)}</span></td>` +
        `<td class="mono">${esc(r.spec.image)}</td>` +
        `<td class="mono">${short(r.winner?.provider)}</td><td>${price ?? '-'}</td><td>${age(now - r.createdAt)}</td></tr>`
      )
    })
    .join('')
  return (
    `<section id="summary-jobs"><h2>Jobs</h2>` +
    (jobs.length === 0
      ? '<p>No jobs yet.</p>'
      : `<p>The newest ${jobs.length}: ${tally(jobs.map((j) => j.state))}.</p><div class="scroll"><table>` +
        `<thead><tr><th>Job</th><th>State</th><th>Image</th><th>Provider</th><th>Price</th><th>Age</th></tr></thead>` +
        `<tbody>${rows}</tbody></table></div>`) +
    '</section>'
  )
}

function providerSection(
  info: InfoReply,
  allocations: AllocationSummary[],
  earnings: { paid: number; claimed: number; refunded: number; outstanding: number },
): string {
  const newest = allocations
    .map((a) => ({ a, at: (a.history?.[0] as { at?: number } | undefined)?.at ?? 0 }))
    .sort((x, y) => y.at - x.at)
    .slice(0, FIRST_PAINT_ROWS)
  const rows = newest
    .map(({ a, at }) => {
      const u = a.usage
      return (
        `<tr data-allocation="${esc(a.allocationId)}" data-state="${esc(a.state)}"><td class="mono">${esc(a.allocationId?.slice(0, 8))}</td>` +
        `<td><span class="state s-${esc(a.state)}">${esc(a.state)}</span></td><td class="mono">${short(a.requester)}</td>` +
        `<td class="mono">${at > 0 ? clockTime(at) : '-'}</td>` +
        `<td>${u?.cpuSeconds?.toFixed(2) ?? '-'}</td><td>${u?.memoryBytes === undefined ? '-' : `${Math.round(u.memoryBytes / MiB)} MiB`}</td>` +
        `<td>${u?.wallSeconds?.toFixed(1) ?? '-'}</td><td>${a.payment?.paid ?? '-'}</td></tr>`
      )
    })
    .join('')
  return (
    `<section id="summary-provider"><h2>Provider <span class="state">${esc(info.mode?.mode ?? '-')}</span></h2>` +
    `<dl><dt>Earned</dt><dd>${earnings.paid}</dd><dt>Claimed</dt><dd>${earnings.claimed}</dd>` +
    `<dt>Returned to requesters</dt><dd>${earnings.refunded}</dd><dt>Outstanding</dt><dd>${earnings.outstanding}</dd></dl>` +
    (allocations.length === 0
      ? '<p>No allocations yet.</p>'
      : `<p>${allocations.length} allocations: ${tally(allocations.map((a) => a.state ?? '?'))}.</p><div class="scroll"><table>` +
        `<thead><tr><th>Allocation</th><th>State</th><th>Requester</th><th>Started</th><th>CPU s</th><th>Memory</th><th>Wall s</th><th>Earned</th></tr></thead>` +
        `<tbody>${rows}</tbody></table></div>`) +
    '</section>'
  )
}

function networkSection(info: InfoReply, peers: PromiseSettledResult<unknown[]>): string {
  const topics = info.topics?.subscribed ?? []
  return (
    `<section id="summary-network"><h2>Network</h2>` +
    (peers.status === 'fulfilled'
      ? `<p>${peers.value.length} connected peers.</p>`
      : failed('Peers', peers.reason)) +
    `<p>Subscribed to ${topics.length === 0 ? 'no topic' : topics.map((t) => `<code>${esc(t)}</code>`).join(', ')}.</p></section>`
  )
}

/**
 * The summary's HTML: who this node is, then per role its newest jobs, its allocations and
 * books, its peers and topics. A part that cannot be read says so; the rest is still shown.
 */
export async function firstPaint(ports: FirstPaintPorts, now: number): Promise<string> {
  const info = ports.info.info()
  const requester = info.roles?.requester === true
  const provider = info.roles?.provider === true
  const [jobs, allocations, earnings, peers] = await Promise.allSettled([
    requester ? ports.jobs.list({ limit: FIRST_PAINT_ROWS }) : Promise.resolve({ jobs: [] }),
    provider ? ports.allocations.list() : Promise.resolve([]),
    provider ? ports.allocations.earnings() : Promise.resolve(undefined),
    ports.peers.list(),
  ])
  const roles = [requester && 'requester', provider && 'provider'].filter(Boolean).join(', ') || 'no role'
  const parts = [
    `<header><strong>DMS</strong></header><main id="summary">`,
    `<p class="note">A summary as of ${clockTime(now)} UTC.<noscript> The live pages need JavaScript: ` +
      `reload this page for fresh figures.</noscript></p>`,
    `<h1>Node</h1><p class="mono">${esc(info.peerId, 100)} · ${roles}${info.version !== undefined ? ` · dms ${esc(info.version)}` : ''}</p>`,
  ]
  if (requester)
    parts.push(jobs.status === 'fulfilled' ? jobsSection(jobs.value.jobs, now) : failed('Jobs', jobs.reason))
  if (provider)
    parts.push(
      allocations.status === 'fulfilled' && earnings.status === 'fulfilled' && earnings.value !== undefined
        ? providerSection(info, allocations.value, earnings.value)
        : failed(
            'Allocations',
            allocations.status === 'rejected'
              ? allocations.reason
              : earnings.status === 'rejected'
                ? earnings.reason
                : 'none',
          ),
    )
  parts.push(networkSection(info, peers))
  parts.push('</main>')
  return parts.join('')
}
