/** The CLI's own output: results on stdout, one-line reasons on stderr. */
export class CliError extends Error {
  override name = 'CliError'
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message)
  }
}

export const print = (s: string): void => void process.stdout.write(`${s}\n`)
export const printJson = (v: unknown): void => void process.stdout.write(`${JSON.stringify(v, null, 2)}\n`)
export const fail = (message: string): never => {
  throw new CliError(message)
}
