/** `dms version`. */
import type { RegisterCommand } from './types.js'

export const registerVersion: RegisterCommand = (program) => {
  program
    .command('version')
    .description('print the dms version and the protocol versions it speaks')
    .option('--json', 'print JSON')
    .action(async (o: { json?: boolean }) => (await import('../version.js')).versionCommand(o))
}
