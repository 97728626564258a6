/**
 * A spy on a real node's gossipsub router: counts the messages one peer sends and whether each got
 * past the graylist check (the first thing gossipsub does with an RPC) on to validation. It calls
 * through and changes nothing.
 */
import type { PeerId } from '@libp2p/interface'
import type { DmsNode } from '../../dms/node.js'

/**
 * Counts, at `node`'s gossipsub, the messages `from` sends and whether each got past the graylist
 * check (the first thing gossipsub does with an RPC) on to validation. A spy on the real router:
 * it calls through and changes nothing.
 */
export function spyOnRpcs(node: DmsNode, from: PeerId) {
  interface Router {
    acceptFrom(id: string): boolean
    handleReceivedRpc(from: PeerId, rpc: { messages: unknown[] }): Promise<void>
  }
  const router = node.host.services.pubsub as unknown as Router
  const acceptFrom = router.acceptFrom.bind(router)
  const handle = router.handleReceivedRpc.bind(router)
  const counts = { accepted: 0, dropped: 0 }
  const waiters = new Set<() => void>()
  let verdict = true
  router.acceptFrom = (id) => (verdict = acceptFrom(id))
  router.handleReceivedRpc = (peer, rpc) => {
    const done = handle(peer, rpc) // runs acceptFrom synchronously, first
    if (peer.equals(from) && rpc.messages.length > 0) {
      counts[verdict ? 'accepted' : 'dropped'] += rpc.messages.length
      for (const w of [...waiters]) w()
    }
    return done
  }
  return {
    counts,
    /** Resolves once `n` messages from `from` have been judged in total. */
    judged: (n: number) =>
      new Promise<void>((resolve) => {
        const check = () => {
          if (counts.accepted + counts.dropped < n) return
          waiters.delete(check)
          resolve()
        }
        waiters.add(check)
        check()
      }),
  }
}
