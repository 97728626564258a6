/** Tables for the CLI's default output: a header row, columns padded to their widest cell. */
import { isNames, isWide, printSafe, showHeaders } from './output.js'

type Cell = string | number | undefined

const text = (c: Cell): string => (c === undefined ? '-' : String(c))
/** One row's cells padded to `widths`, the last not padded. */
const lineOf = (r: string[], widths: number[]): string =>
  r
    .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i])))
    .join('  ')
    .trimEnd()

/** The lines of a table: `headers`, then `rows`; a missing cell is `-`, the last column not padded. */
export function tableLines(headers: string[], rows: Cell[][]): string[] {
  const cells = rows.map((r) => r.map(text))
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((r) => r[i]?.length ?? 0)))
  return [lineOf(headers, widths), ...cells.map((r) => lineOf(r, widths))]
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

/**
 * A table printed as its rows change (`--watch`, as `kubectl get -w`): the first call prints the
 * header and every row, each later call only the rows that are new or differ from how they were
 * last printed (by `key`), in the widths seen so far. `-o name` prints the key of each such row.
 */
export function rowStream<T>(columns: Array<Column<T>>, key: (row: T) => string): (rows: T[]) => void {
  const shown = columns.filter((c) => c.wide !== true || isWide())
  const last = new Map<string, string>()
  let widths = shown.map((c) => c.header.length)
  let first = true
  return (rows) => {
    const changed: Array<[string, string[]]> = []
    for (const r of rows) {
      const cells = shown.map((c) => text(c.cell(r)))
      const k = key(r)
      if (last.get(k) === cells.join('\0')) continue
      last.set(k, cells.join('\0'))
      changed.push([k, cells])
    }
    widths = widths.map((w, i) => Math.max(w, ...changed.map(([, c]) => c[i]?.length ?? 0)))
    if (isNames()) return void changed.forEach(([k]) => printSafe(k))
    if (first && showHeaders())
      printSafe(
        lineOf(
          shown.map((c) => c.header),
          widths,
        ),
      )
    first = false
    for (const [, cells] of changed) printSafe(lineOf(cells, widths))
  }
}
