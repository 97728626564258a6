import { ApiClient, ApiClientError } from '../api/client.js'
import { CliError, print, printJson } from './output.js'

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
  if (opts.json) return printJson({ peers })
  if (peers.length === 0) return print('no peers connected')
  for (const p of peers)
    print(
      [
        p.peerId,
        (p.roles === undefined ? '?' : p.roles.length === 0 ? '-' : p.roles.join(',')).padEnd(20),
        (p.connection ?? 'direct').padEnd(7),
        (p.latencyMs === undefined ? '' : `${Math.round(p.latencyMs)} ms`).padEnd(8),
        p.direction.padEnd(8),
        p.bidTopic ? 'bids ' : '     ',
        score(p),
        p.addrs.join(' '),
      ].join('  '),
    )
}

/** The peer's gossip score, marked when it is graylisted (specs/protocol.md, "Gossip scoring"). */
function score(p: Peer): string {
  const text = `score ${Math.round(p.gossipScore ?? 0)}`
  return (p.graylisted === true ? `${text} (graylisted)` : text).padEnd(24)
}
