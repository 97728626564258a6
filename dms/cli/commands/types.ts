/** What every command file gets: the program to add its command to, and the shared defaults. */
import type { Command } from 'commander'

export interface CliContext {
  /** `$DMS_DATA_DIR`, else `~/.dms`. */
  defaultDataDir: string
  /** The `--socket <path>` option of commands that talk to a running node. */
  socketOpt: [string, string, string]
}

/** Adds one command (or one group of subcommands) to `program`. */
export type RegisterCommand = (program: Command, ctx: CliContext) => void
