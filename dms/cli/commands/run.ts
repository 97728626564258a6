/** `dms run`: a node in the foreground. */
import type { RegisterCommand } from './types.js'

export const registerRun: RegisterCommand = (program, { defaultDataDir }) => {
  program
    .command('run')
    .description(
      'run a node until SIGINT/SIGTERM (a second signal exits at once). Config: a JSON file (specs/config.md) plus DMS_* environment overrides; the key passphrase comes from DMS_PASSPHRASE or a prompt. Prints one JSON "ready" line on stdout; logs go to stderr (readable on a terminal, JSON lines otherwise)',
    )
    .option('-c, --config <file>', 'node config (JSON); without it, defaults plus DMS_* variables')
    .option('--data-dir <dir>', "override the config's dataDir (and DMS_DATA_DIR)")
    .option('--log-level <level>', 'trace, debug, info, warn, error, fatal or silent (env DMS_LOG_LEVEL)')
    .addHelpText(
      'after',
      '\nEnvironment overrides (win over the file): DMS_DATA_DIR, DMS_LISTEN, DMS_BOOTSTRAP (comma lists),\nDMS_ONE_HOST, DMS_LOG_LEVEL, DMS_API_SOCKET, DMS_API_PORT (TCP listener on 127.0.0.1), DMS_API_TOKEN.\nLogs: DMS_LOG_FORMAT=json|pretty (default: readable on a terminal, JSON lines otherwise); NO_COLOR=1: no colours.',
    )
    .action(async (o: { config?: string; dataDir?: string; logLevel?: string }) =>
      (await import('../run.js')).runCommand({ ...o, defaultDataDir }),
    )
}
