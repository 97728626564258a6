/** Tables for the CLI's default output: a header row, columns padded to their widest cell. */
import { isNames, isWide, printSafe, showHeaders } from './output.js'

type Cell = string | number | undefined

/** The lines of a table: `headers`, then `rows`; a missing cell is `-`, the last column not padded. */
export function tableLines(headers: string[], rows: Cell[][]): string[] {
  const cells = rows.map((r) => r.map((c) => (c === undefined ? '-' : String(c))))
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((r) => r[i]?.length ?? 0)))
  const line = (r: string[]) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd()
  return [line(headers), ...cells.map(line)]
}

/** Prints `rows` under `headers`, each line made terminal-safe. */
export function printTable(headers: string[], rows: Cell[][]): void {
  if (isNames()) {
    // The ID column (else the first): what the next command takes.
    const at = Math.max(0, headers.indexOf('ID'))
    for (const r of rows) if (r[at] !== undefined) printSafe(String(r[at]))
    return
  }
  const lines = tableLines(headers, rows)
  for (const l of showHeaders() ? lines : lines.slice(1)) printSafe(l)
}

/** A column of `printRows`: its header, its cell for a row, and whether only `-o wide` shows it. */
export interface Column<T> {
  header: string
  cell: (row: T) => Cell
  wide?: boolean
}

/** Prints `rows` as a table of `columns`; the `wide` columns only with `-o wide`. */
export function printRows<T>(columns: Array<Column<T>>, rows: T[]): void {
  const shown = columns.filter((c) => c.wide !== true || isWide())
  printTable(
    shown.map((c) => c.header),
    rows.map((r) => shown.map((c) => c.cell(r))),
  )
}
