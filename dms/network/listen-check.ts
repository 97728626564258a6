/**
 * Why a host could not listen: libp2p reports only "some configured addresses failed to be
 * listened on". Each TCP listen multiaddr is tried with a plain socket to get the system's reason
 * (address in use, address not on this machine, no permission), for a message that names it.
 */
import { createServer } from 'node:net'

const TCP = /^\/(ip4|ip6)\/([^/]+)\/tcp\/(\d{1,5})(?:\/|$)/

/** One line per listen address that cannot be listened on, e.g. `/ip4/…/tcp/4001: address in use`. */
export async function listenProblems(addrs: readonly string[]): Promise<string[]> {
  const problems: string[] = []
  for (const addr of addrs) {
    const m = TCP.exec(addr)
    if (m === null) {
      problems.push(`${addr}: not a /ip4/<address>/tcp/<port> or /ip6/<address>/tcp/<port> multiaddr`)
      continue
    }
    const why = await tryListen(m[2], Number(m[3]))
    if (why !== undefined) problems.push(`${addr}: ${why}`)
  }
  return problems
}

const REASONS: Record<string, string> = {
  EADDRINUSE: 'address in use (another process listens on this port)',
  EADDRNOTAVAIL: 'address not available on this machine',
  EACCES: 'permission denied (ports under 1024 need privileges)',
}

function tryListen(host: string, port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    if (port > 65535) return resolve('port out of range (0-65535)')
    const s = createServer()
    s.once('error', (err: NodeJS.ErrnoException) => resolve(REASONS[err.code ?? ''] ?? err.message))
    s.listen({ host, port, exclusive: true }, () => s.close(() => resolve(undefined)))
  })
}
