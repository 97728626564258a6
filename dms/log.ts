import { pino, type Logger } from 'pino'

export type { Logger }

/** Root logger; components take children named like `dms:provider:bids`. Logs go to stderr. */
export function createLogger(opts: { level?: string; name?: string } = {}): Logger {
  return pino(
    { level: opts.level ?? process.env.DMS_LOG_LEVEL ?? 'info', name: opts.name ?? 'dms', base: undefined },
    pino.destination(2),
  )
}

/** A logger that drops everything: the null object for tests and library use. */
export const silentLogger: Logger = pino({ level: 'silent' })

export function child(log: Logger, component: string, fields: Record<string, unknown> = {}): Logger {
  return log.child({ c: component, ...fields })
}
