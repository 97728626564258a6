/** `dms swarm-key`: a pre-shared key for a private network. */
import type { RegisterCommand } from './types.js'

export const registerSwarmKey: RegisterCommand = (program) => {
  program
    .command('swarm-key')
    .description('print a new pre-shared key for a private network (save it, set network.pnet.keyFile)')
    .action(async () => {
      const { newSwarmKey } = await import('../../network/pnet.js')
      process.stdout.write(`${newSwarmKey()}\n`)
    })
}
