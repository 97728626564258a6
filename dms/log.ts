import { pino, type Logger } from 'pino'
import { prettyDestination } from './log-pretty.js'

export type { Logger }

/** How logs are written: JSON lines, or readable lines (with or without colour). */
export interface LogStyle {
  pretty: boolean
  colour: boolean
}

/**
 * Readable lines on a terminal, JSON lines otherwise; `DMS_LOG_FORMAT=json|pretty` decides instead.
 * Colours only for readable lines on a terminal, never when `NO_COLOR` is set (no-color.org).
 */
export function logStyle(
  isTTY: boolean | undefined,
  env: Record<string, string | undefined> = process.env,
): LogStyle {
  const format = env.DMS_LOG_FORMAT
  const pretty = format === 'pretty' ? true : format === 'json' ? false : isTTY === true
  const colour = pretty && isTTY === true && (env.NO_COLOR ?? '') === ''
  return { pretty, colour }
}

/** Root logger; components take children named like `dms:provider:bids`. Logs go to stderr. */
export function createLogger(opts: { level?: string; name?: string; style?: LogStyle } = {}): Logger {
  const style = opts.style ?? logStyle(process.stderr.isTTY)
  const dest = pino.destination(2)
  return pino(
    { level: opts.level ?? process.env.DMS_LOG_LEVEL ?? 'info', name: opts.name ?? 'dms', base: undefined },
    style.pretty ? prettyDestination(dest, style.colour) : dest,
  )
}

/** A logger that drops everything: the null object for tests and library use. */
export const silentLogger: Logger = pino({ level: 'silent' })

export function child(log: Logger, component: string, fields: Record<string, unknown> = {}): Logger {
  return log.child({ c: component, ...fields })
}
