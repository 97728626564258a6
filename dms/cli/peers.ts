import { ApiClient, ApiClientError } from '../api/client.js'
import { CliError, print, printData } from './output.js'
import { printRows } from './table.js'

interface Peer {
  peerId: string
  addrs: string[]
  direction: string
  roles?: string[]
  connection?: string
  latencyMs?: number
  bidTopic: boolean
  gossipScore?: number
  graylisted?: boolean
}

/**
 * `dms peers`: the node's open libp2p connections (GET /v1/peers): each peer's roles, how it is
 * connected (direct or relayed), its latency, gossip standing and addresses.
 */
export async function peersCommand(opts: { socket: string; json?: boolean }): Promise<void> {
  const { peers } = await new ApiClient(opts.socket)
    .ok<{ peers: Peer[] }>('GET', '/v1/peers')
    .catch((err: unknown) => {
      if (err instanceof ApiClientError) throw new CliError(err.message)
      throw err
    })
  if (opts.json) return printData({ peers })
  if (peers.length === 0) return print('no peers connected')
  printRows<Peer>(
    [
      { header: 'PEER', cell: (p) => p.peerId },
      { header: 'ROLES', cell: (p) => (p.roles === undefined ? '?' : p.roles.join(',') || '-') },
      { header: 'CONNECTION', cell: (p) => p.connection ?? 'direct' },
      { header: 'LATENCY', cell: (p) => (p.latencyMs === undefined ? '-' : `${Math.round(p.latencyMs)} ms`) },
      { header: 'DIRECTION', cell: (p) => p.direction },
      { header: 'BIDS', cell: (p) => (p.bidTopic ? 'yes' : 'no') },
      { header: 'SCORE', cell: score },
      { header: 'ADDRESSES', cell: (p) => p.addrs.join(' '), wide: true },
    ],
    peers,
  )
}

/** The peer's gossip score, marked when it is graylisted (specs/protocol.md, "Gossip scoring"). */
function score(p: Peer): string {
  const text = String(Math.round(p.gossipScore ?? 0))
  return p.graylisted === true ? `${text} (graylisted)` : text
}
