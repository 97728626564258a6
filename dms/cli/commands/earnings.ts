/** `dms earnings`: the provider's books (specs/provider-books.md). */
import type { EarningsOptions } from '../earnings.js'
import type { RegisterCommand } from './types.js'

export const registerEarnings: RegisterCommand = (program, { defaultDataDir }) => {
  program
    .command('earnings')
    .description("this provider's books: paid, claimed, refunded and outstanding micro-tokens, per requester")
    .option('--data-dir <dir>', 'data directory of the provider node', defaultDataDir)
    .option('--socket <path>', "REST socket of the running node (default: '<data-dir>/dms.sock')")
    .option('--json', 'print JSON')
    .action(async (o: EarningsOptions) => (await import('../earnings.js')).earningsCommand(o))
}
