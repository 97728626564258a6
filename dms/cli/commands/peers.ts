/** `dms peers`: the node's connections. */
import type { RegisterCommand } from './types.js'

export const registerPeers: RegisterCommand = (program, { socketOpt }) => {
  program
    .command('peers')
    .description(
      'list the peers this node is connected to: roles, direct or relayed, latency, direction, gossip score, addresses',
    )
    .option('--json', 'print JSON')
    .option(...socketOpt)
    .action(async (o: { socket: string; json?: boolean }) => (await import('../peers.js')).peersCommand(o))
}
