/** `dms key change-passphrase`: the node key, sealed at rest (dms/keys.ts). */
import type { RegisterCommand } from './types.js'

export const registerKey: RegisterCommand = (program, { defaultDataDir }) => {
  const key = program.command('key').description("the node's key, sealed at rest with a passphrase")
  key
    .command('change-passphrase')
    .description(
      're-seal the node key with a new passphrase (the peer id stays). Current: DMS_PASSPHRASE or asked; new: DMS_NEW_PASSPHRASE or asked twice',
    )
    .option('--data-dir <dir>', 'data directory', defaultDataDir)
    .option('--json', 'print JSON')
    .action(async (o: { dataDir: string; json?: boolean }) =>
      (await import('../key.js')).changePassphraseCommand(o),
    )
}
