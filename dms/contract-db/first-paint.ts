/**
 * The contract-db operator page's first paint (specs/dashboard.md, "First paint"): the
 * conservation figure, contracts by state and the accounts, rendered on the server from the same
 * overview the page reads, so a screenshot or a browser without scripts shows the books.
 */
import { clockTime, esc } from '../web/html.js'
import type { Conservation } from './conservation.js'

/** What the summary reads of the page's overview (web.ts, `Overview`). */
export interface OverviewSummary {
  peerId: string
  approved: readonly unknown[]
  accounts: readonly unknown[]
  byState: Record<string, number>
  conservation: Conservation
}

/** Contracts shown by state, in this order (the page's own). */
const STATES = ['active', 'settled', 'terminated', 'claimed', 'expired'] as const

/** The summary's HTML for `o`, made at `now`. */
export function operatorFirstPaint(o: OverviewSummary, now: number): string {
  const c = o.conservation
  const figure =
    `<section id="summary-conservation" class="${c.ok ? 'figure good' : 'figure broken'}" data-ok="${c.ok}">` +
    `<h2>Conservation</h2><p class="big">${c.ok ? '✓' : '✗'} credited ${c.credited} ${c.ok ? '=' : '≠'} ` +
    `balances ${c.balances} + escrow ${c.escrow}</p>` +
    (c.ok
      ? ''
      : `<p class="bad">The accounts hold ${Math.abs(c.difference)} micro-tokens ${c.difference > 0 ? 'more' : 'less'} than was ever credited.</p>`) +
    '</section>'
  const states = STATES.map(
    (s) => `<span class="state s-${s}" data-state="${s}">${s} <b>${o.byState[s] ?? 0}</b></span>`,
  ).join(' ')
  return (
    `<header><strong>DMS contract-db</strong></header><main id="summary">` +
    `<p class="note">A summary as of ${clockTime(now)} UTC.<noscript> The live page needs JavaScript: ` +
    `reload this page for fresh figures.</noscript></p>` +
    `<p class="mono">${esc(o.peerId, 100)}</p>${figure}` +
    `<section id="summary-contracts"><h2>Contracts by state</h2><p>${states}</p></section>` +
    `<section id="summary-accounts"><h2>Accounts</h2><p>${o.accounts.length} accounts, ${o.approved.length} approved entities.</p></section>` +
    '</main>'
  )
}
