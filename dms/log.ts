import { pino, type Logger } from 'pino'
import { DmsError } from '../actors/errors.js'
import { prettyDestination } from './log-pretty.js'

export type { Logger }

/** How logs are written: JSON lines, or readable lines (with or without colour). */
export interface LogStyle {
  pretty: boolean
  colour: boolean
}

/** `DMS_LOG_FORMAT` set to something else than `json` or `pretty`. */
export class LogFormatError extends DmsError {
  constructor(value: string) {
    super('INVALID_LOG_FORMAT', `DMS_LOG_FORMAT: ${JSON.stringify(value.slice(0, 64))} is not json or pretty`)
  }
}

/**
 * Readable lines on a terminal, JSON lines otherwise; `DMS_LOG_FORMAT=json|pretty` decides instead
 * (empty counts as unset; any other value is refused with LogFormatError).
 * Colours only for readable lines on a terminal, never when `NO_COLOR` is set (no-color.org).
 */
export function logStyle(
  isTTY: boolean | undefined,
  env: Record<string, string | undefined> = process.env,
): LogStyle {
  const format = env.DMS_LOG_FORMAT ?? ''
  if (!['', 'json', 'pretty'].includes(format)) throw new LogFormatError(format)
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
