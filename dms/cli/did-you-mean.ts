/**
 * The "did you mean …?" hint of a one-line usage error (issue 35): the known word closest to what
 * was typed, when it is close enough to be a typo (specs/cli.md, "Output and exit codes").
 */

/** Edit distance with adjacent swaps counted as one edit (`lsit` → `list` is 1). */
export function typoDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  )
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1)
    }
  return d[a.length][b.length]
}

/**
 * The candidate closest to `typed` (case-insensitive), if within a third of its length (at least
 * one edit); undefined when none is close. Input longer than 64 characters is not compared: no
 * known word is that long, and the table grows with the square of the length.
 */
export function closest(typed: string, candidates: readonly string[]): string | undefined {
  if (typed.length === 0 || typed.length > 64) return undefined
  const word = typed.toLowerCase()
  let best: { name: string; d: number } | undefined
  for (const name of candidates) {
    const d = typoDistance(word, name.toLowerCase())
    if (d <= Math.max(1, Math.floor(name.length / 3)) && (best === undefined || d < best.d))
      best = { name, d }
  }
  return best?.name
}

/** `; did you mean X?` for a usage line, or '' when nothing is close. */
export function didYouMean(typed: string, candidates: readonly string[]): string {
  const hit = closest(typed, candidates)
  return hit === undefined ? '' : `; did you mean ${hit}?`
}
