/** The CLI's own output: results on stdout, one-line reasons on stderr. */
import { DmsError } from '../../actors/errors.js'
export class CliError extends DmsError {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super('CLI_ERROR', message)
  }
}

export const print = (s: string): void => void process.stdout.write(`${s}\n`)
export const printJson = (v: unknown): void => void process.stdout.write(`${JSON.stringify(v, null, 2)}\n`)
export const fail = (message: string): never => {
  throw new CliError(message)
}

/**
 * `s` with control characters (C0, DEL, C1), line and paragraph separators and bidirectional
 * overrides written as `\uXXXX`: text that came from a peer, a job spec or a container (job names,
 * decline reasons, output paths) cannot move the cursor, recolour or rewrite the terminal.
 */
export function terminalSafe(s: string): string {
  let out = ''
  for (const ch of s) {
    const c = ch.codePointAt(0) as number
    const unsafe =
      c < 0x20 ||
      (c >= 0x7f && c <= 0x9f) ||
      c === 0x2028 ||
      c === 0x2029 ||
      (c >= 0x202a && c <= 0x202e) ||
      (c >= 0x2066 && c <= 0x2069)
    out += unsafe ? `\\u${c.toString(16).padStart(4, '0')}` : ch
  }
  return out
}

/** `print` for a line that holds text from elsewhere (see `terminalSafe`). */
export const printSafe = (s: string): void => print(terminalSafe(s))
