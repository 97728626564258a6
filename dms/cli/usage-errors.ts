/**
 * Usage errors (an unknown flag or command, a missing or extra argument, a bad option value): one
 * line on stderr naming the mistake and where the command's help is, exit status 2. Commander's
 * default printed the whole usage after the error, which buried the one line that mattered
 * (issue 29). Spec: specs/cli.md, "Output and exit codes".
 */
import { Command, type CommanderError } from 'commander'
import { terminalSafe } from '../terminal-safe.js'
import { didYouMean } from './did-you-mean.js'

/** The exit status of a usage error (as getopt-style tools and shells use it). */
export const USAGE_EXIT = 2

/** The line printed for a usage error of the command at `path` (e.g. `['dms', 'job', 'list']`). */
export function usageLine(message: string, path: readonly string[]): string {
  // Commander's own hint comes on a second line: kept, on the one line.
  const what = message
    .trim()
    .replace(/^error: /, '')
    .replace(/\s*\(Did you mean (.+)\?\)$/, '; did you mean $1?')
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
  // A real subcommand, not commander's implicit one: that one printed the whole usage for a
  // name it did not know (`dms help jbo`).
  if (cmd.commands.length > 0 && !cmd.commands.some((c) => c.name() === 'help'))
    cmd.addCommand(helpCommandOf(cmd))
  cmd
    .showHelpAfterError(false)
    .configureOutput({ outputError: (str, write) => write(usageLine(str, path)) })
    .exitOverride((err: CommanderError) => exit(err.exitCode === 0 ? 0 : USAGE_EXIT))
  for (const sub of cmd.commands) oneLineUsageErrors(sub, [...path, sub.name()], exit)
}

/**
 * `dms help [command...]`: the usage of the command named; a name that is no command is a usage
 * error like any other (commander's own help command printed the whole usage for it).
 */
function helpCommandOf(cmd: Command): Command {
  return new Command('help')
    .description('display help for command')
    .argument('[command...]', 'the command')
    .action((names: string[]) => {
      let at = cmd
      for (const name of names) {
        const sub = at.commands.find((c) => c.name() === name || c.aliases().includes(name))
        if (sub === undefined) {
          const known = at.commands.flatMap((c) => [c.name(), ...c.aliases()])
          return at.error(`error: unknown command '${name}'${didYouMean(name, known)}`, {
            code: 'commander.unknownCommand',
          })
        }
        at = sub
      }
      at.help()
    })
}
