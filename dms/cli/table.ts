/** Tables for the CLI's default output: a header row, columns padded to their widest cell. */
import { printSafe } from './output.js'

/** Prints `rows` under `headers`, each cell made terminal-safe; the last column is not padded. */
export function printTable(headers: string[], rows: Array<Array<string | number | undefined>>): void {
  const cells = rows.map((r) => r.map((c) => (c === undefined ? '-' : String(c))))
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((r) => r[i]?.length ?? 0)))
  const line = (r: string[]) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd()
  printSafe(line(headers))
  for (const r of cells) printSafe(line(r))
}
