/** `dms devnet`: a local network of separate processes. */
import type { RegisterCommand } from './types.js'

export const registerDevnet: RegisterCommand = (program) => {
  program
    .command('devnet')
    .description(
      'start a local network on 127.0.0.1 as separate processes: a contract-db, N providers and a requester, with approved identities and a funded requester; Ctrl-C stops them all',
    )
    .option('--providers <n>', 'number of providers (1-26)', '2')
    .option('--dir <dir>', 'keep data, configs and logs in this folder (default: a temp folder, removed)')
    .option('--keep', 'keep the temp folder at stop')
    .option('--json', 'print one JSON line with every socket and peer id once ready')
    .option('--price-per-result <n>', 'the providers bid this fixed price (micro-tokens) per verified result')
    .option(
      '--price-fixed <n>',
      'the providers bid this fixed price (micro-tokens) for a whole job, whatever its exit',
    )
    .option(
      '--provider-config <file>',
      'a JSON object merged into each provider\'s "provider" config section (engines, process engine, offer...), checked before anything starts',
    )
    .action(
      async (o: {
        providers: string
        dir?: string
        keep?: boolean
        json?: boolean
        pricePerResult?: string
        priceFixed?: string
        providerConfig?: string
      }) => (await import('../devnet.js')).devnetCommand(o),
    )
}
