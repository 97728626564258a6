/**
 * Usage errors (an unknown flag or command, a missing or extra argument, a bad option value): one
 * line on stderr naming the mistake and where the command's help is, exit status 2. Commander's
 * default printed the whole usage after the error, which buried the one line that mattered
 * (issue 29). Spec: specs/cli.md, "Output and exit codes".
 */
import type { Command, CommanderError } from 'commander'
import { terminalSafe } from '../terminal-safe.js'

/** The exit status of a usage error (as getopt-style tools and shells use it). */
export const USAGE_EXIT = 2

/** The line printed for a usage error of the command at `path` (e.g. `['dms', 'job', 'list']`). */
export function usageLine(message: string, path: readonly string[]): string {
  const what = message.trim().replace(/^error: /, '')
  return `${path[0]}: ${terminalSafe(what)} (see ${[...path, '--help'].join(' ')})\n`
}

/**
 * Makes `cmd` and each of its subcommands report usage errors in one line (`usageLine`) and exit
 * with USAGE_EXIT. Help and version still exit 0. Call it once every command is registered.
 */
export function oneLineUsageErrors(
  cmd: Command,
  path: readonly string[] = [cmd.name()],
  exit: (code: number) => never = (code) => process.exit(code),
): void {
  cmd
    .showHelpAfterError(false)
    .configureOutput({ outputError: (str, write) => write(usageLine(str, path)) })
    .exitOverride((err: CommanderError) => exit(err.exitCode === 0 ? 0 : USAGE_EXIT))
  for (const sub of cmd.commands) oneLineUsageErrors(sub, [...path, sub.name()], exit)
}
