/**
 * Logs for people: pino's JSON lines rewritten as `12:00:01.234 INFO  provider:bids bid sent
 * jobId=… price=…`, coloured by level when asked. `createLogger` uses it when stderr is a
 * terminal; every value is written terminal-safe (logs quote what peers sent).
 */
import { terminalSafe } from './terminal-safe.js'

const LEVELS: Record<number, { name: string; colour: number }> = {
  10: { name: 'TRACE', colour: 90 },
  20: { name: 'DEBUG', colour: 34 },
  30: { name: 'INFO', colour: 32 },
  40: { name: 'WARN', colour: 33 },
  50: { name: 'ERROR', colour: 31 },
  60: { name: 'FATAL', colour: 35 },
}

const value = (v: unknown): string => {
  if (typeof v === 'string') return /^[^\s"=]+$/.test(v) ? terminalSafe(v) : terminalSafe(JSON.stringify(v))
  if (typeof v === 'object' && v !== null) return terminalSafe(JSON.stringify(v))
  return String(v)
}

/** One pino JSON line as a readable line (ending with a newline); a line that is not JSON is kept. */
export function prettyLine(line: string, colour: boolean): string {
  let rec: Record<string, unknown>
  try {
    rec = JSON.parse(line) as Record<string, unknown>
  } catch {
    return line.endsWith('\n') ? line : `${line}\n`
  }
  const paint = (code: number, s: string) => (colour ? `\x1b[${code}m${s}\x1b[0m` : s)
  const { level, time, msg, c, name, err, ...rest } = rec
  const lv = LEVELS[level as number] ?? { name: String(level), colour: 0 }
  const at = typeof time === 'number' ? new Date(time).toISOString().slice(11, 23) : ''
  const parts = [paint(90, at), paint(lv.colour, lv.name.padEnd(5))]
  const who = c ?? name
  if (who !== undefined) parts.push(paint(36, value(who)))
  if (msg !== undefined) parts.push(typeof msg === 'string' ? terminalSafe(msg) : value(msg))
  for (const [k, v] of Object.entries(rest)) parts.push(`${paint(90, `${terminalSafe(k)}=`)}${value(v)}`)
  let out = parts.filter((p) => p !== '').join(' ')
  if (err !== undefined && err !== null) {
    const e = err as { message?: unknown; stack?: unknown }
    out += ` ${paint(90, 'err=')}${value(e.message ?? err)}`
    // The stack only at debug and below (where the operator asked for detail), or for fatal errors.
    if (typeof e.stack === 'string' && ((level as number) <= 20 || (level as number) >= 60))
      out += `\n${e.stack
        .split('\n')
        .slice(1)
        .map((l) => `    ${terminalSafe(l.trim())}`)
        .join('\n')}`
  }
  return `${out}\n`
}

/** A pino destination that writes each line to `out` made readable. */
export function prettyDestination(
  out: { write(s: string): unknown },
  colour: boolean,
): { write(s: string): void } {
  return {
    write(s: string) {
      // pino hands over one line (or several joined with newlines when buffered).
      for (const line of s.split('\n')) if (line !== '') out.write(prettyLine(line, colour))
    },
  }
}
