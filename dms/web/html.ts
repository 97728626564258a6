/**
 * HTML made on the server for the dashboards' first paints (specs/dashboard.md, "First paint"):
 * every value from outside goes through `esc`.
 */

/** Longest text a cell shows; longer is cut with `…`. */
export const CELL_MAX = 80

const ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
}

/** Text made safe for HTML (an element's text or a quoted attribute), cut to `max` characters. */
export function esc(v: string | number | undefined, max = CELL_MAX): string {
  const s = String(v ?? '')
  const cut = s.length > max ? `${s.slice(0, max - 1)}…` : s
  return cut.replace(/[&<>"']/g, (c) => ENTITIES[c])
}

/** `3 a · 1 b` of a tally of values, biggest first. */
export function tally(values: readonly string[]): string {
  const n = new Map<string, number>()
  for (const v of values) n.set(v, (n.get(v) ?? 0) + 1)
  return [...n]
    .sort((a, b) => b[1] - a[1])
    .map(([k, c]) => `${c} ${esc(k)}`)
    .join(' · ')
}

/** A time of day, UTC, to the second. */
export const clockTime = (ms: number) => new Date(ms).toISOString().slice(11, 19)
