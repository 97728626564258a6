/**
 * The CLI's own output: results on stdout, one-line reasons on stderr. The format of the results
 * is chosen once per invocation with `-o table|wide|json|yaml|name` (`--json` = `-o json`, `-q` =
 * `-o name`: the ids only), and `--no-headers` drops a table's header row.
 */
import type { Command } from 'commander'
import { didYouMean } from './did-you-mean.js'
import { DmsError } from '../../actors/errors.js'
import { terminalSafe } from '../terminal-safe.js'
import { toYaml } from './yaml.js'

export class CliError extends DmsError {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super('CLI_ERROR', message)
  }
}

export const print = (s: string): void => void process.stdout.write(`${s}\n`)
export const OUTPUT_FORMATS = ['table', 'wide', 'json', 'yaml', 'name'] as const
export type OutputFormat = (typeof OUTPUT_FORMATS)[number]
let format: OutputFormat = 'table'
let headers = true

/** The format chosen for this invocation (`table` unless `-o` or `--json` said otherwise). */
export const outputFormat = (): OutputFormat => format
/** `-o wide`: tables show their extra columns. */
export const isWide = (): boolean => format === 'wide'
/** `-o name` / `-q`: a table prints only its ID column, one id a line, for scripts. */
export const isNames = (): boolean => format === 'name'
/** Whether a table prints its header row (`--no-headers` and `-o name` say no). */
export const showHeaders = (): boolean => headers && format !== 'name'

/**
 * A line about the data rather than data ("no jobs", "more: add --cursor …"): on stdout beside a
 * table, on stderr when a script reads the rows (`-o name`, `--no-headers`).
 */
export function printNote(s: string): void {
  if (showHeaders()) printSafe(s)
  else process.stderr.write(`${terminalSafe(s)}\n`)
}

/**
 * Reads `-o`/`--json` of the command about to run. For json and yaml it sets `o.json`, the test
 * every command makes for "print the data, not the table", and `printData` then writes that format.
 */
export function applyOutputOption(o: {
  output?: unknown
  json?: unknown
  quiet?: unknown
  headers?: unknown
}): OutputFormat {
  format = 'table'
  headers = o.headers !== false
  if (o.quiet === true) {
    if (o.output !== undefined && o.output !== 'name')
      throw new CliError(`-q and -o ${JSON.stringify(o.output)}: -q is -o name, give only one of them`)
    if (o.json === true) throw new CliError('-q and --json: give only one of them')
    o.output = 'name'
  }
  if (o.output !== undefined) {
    const f = o.output as OutputFormat
    if (!OUTPUT_FORMATS.includes(f))
      throw new CliError(
        `-o/--output: ${JSON.stringify(o.output)} is not one of ${OUTPUT_FORMATS.join(', ')}${typeof o.output === 'string' ? didYouMean(o.output, OUTPUT_FORMATS) : ''}`,
      )
    if (o.json === true && f !== 'json') throw new CliError(`--json and -o ${f}: give only one of them`)
    format = f
  } else if (o.json === true) format = 'json'
  if (format === 'json' || format === 'yaml') o.json = true
  return format
}

/**
 * Adds `-o, --output <format>` to every command (and subcommand) that has `--json` meaning "print
 * JSON", and reads it before each action runs.
 */
export function addOutputOptions(program: Command): void {
  const walk = (c: Command) => {
    if (c.options.some((opt) => opt.long === '--json' && opt.description === 'print JSON'))
      c.option(
        '-o, --output <format>',
        'table (default), wide (more columns), json (= --json), yaml, or name (ids only)',
      )
        .option('-q, --quiet', 'ids only, one a line (= -o name)')
        .option('--no-headers', 'tables without their header row')
    c.commands.forEach(walk)
  }
  walk(program)
  program.hook('preAction', (_program, action) => void applyOutputOption(action.opts()))
}

/**
 * C1 controls and bidi overrides a peer may put in a string: written as `\uXXXX` escapes, which
 * JSON and YAML's double-quoted strings (every non-ASCII string in `toYaml`) read back as the same
 * character, so a terminal never acts on them.
 */
const UNSAFE = /[\u0080-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g
export const escapeUnsafe = (text: string): string =>
  text.replace(UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)

/** The data of a result in the chosen machine format: JSON (2-space indent) or YAML. */
export const printData = (v: unknown): void =>
  void process.stdout.write(escapeUnsafe(format === 'yaml' ? toYaml(v) : `${JSON.stringify(v, null, 2)}\n`))
/** `printData`'s name before `-o yaml` existed, kept for code written against it. */
export const printJson = printData
export const fail = (message: string): never => {
  throw new CliError(message)
}

export { terminalSafe } from '../terminal-safe.js'

/** The logger `make` builds, a bad `DMS_LOG_FORMAT` (or any DmsError it throws) as a one-line refusal. */
export function cliLogger<T>(make: () => T): T {
  try {
    return make()
  } catch (err) {
    if (err instanceof DmsError) throw new CliError(err.message)
    throw err
  }
}

/** `print` for a line that holds text from elsewhere (see `terminalSafe`). */
export const printSafe = (s: string): void => print(terminalSafe(s))

/**
 * A job's output to stdout and stderr; a pod's member by member, each under a
 * `==> member <name> <==` line (in the spec's order).
 */
export function writeOutput(out: {
  stdout?: string
  stderr?: string
  members?: ReadonlyArray<{ name: string; stdout: string; stderr: string }>
}): void {
  if (out.members === undefined || out.members.length === 0) {
    process.stdout.write(out.stdout ?? '')
    process.stderr.write(out.stderr ?? '')
    return
  }
  for (const m of out.members) {
    process.stdout.write(`==> member ${m.name} <==\n`)
    process.stdout.write(m.stdout)
    process.stderr.write(m.stderr)
  }
}
