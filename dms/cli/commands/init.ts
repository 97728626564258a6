/** `dms init`: the node's identity. */
import type { RegisterCommand } from './types.js'

export const registerInit: RegisterCommand = (program, { defaultDataDir }) => {
  program
    .command('init')
    .description(
      "create this node's identity (Ed25519 key sealed with DMS_PASSPHRASE, or a passphrase asked on the terminal) and print its peer id",
    )
    .option('--data-dir <dir>', 'data directory', defaultDataDir)
    .option('--json', 'print JSON')
    .action(async (o: { dataDir: string; json?: boolean }) => (await import('../run.js')).initCommand(o))
}
