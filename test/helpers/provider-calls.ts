/**
 * Counts the requests the providers' inboxes handle, by peer and behaviour, and can make chosen
 * providers answer as a version before the lock was folded into the contract: terms are
 * countersigned only for a bid locked by a job request before (`BID_NOT_LOCKED` otherwise, as
 * those versions refuse). It wraps the behaviours registered on `provider` inboxes between
 * `watchProviderCalls()` and `stop()`: start the network in between. The handlers themselves are
 * the real ones.
 */
import { RefusedError } from '../../actors/errors.js'
import { Actor, type Behaviour, type Message } from '../../actors/actor.js'
import type { BehaviourDef } from '../../actors/codec.js'
import { W } from '../../dms/protocol/behaviours.js'
import { INBOX } from '../../dms/protocol/handles.js'
import type { ContractSignRequest, JobRequest } from '../../dms/protocol/messages.js'

export interface ProviderCalls {
  /** Requests handled by `peer` for `behaviour` (`/dms/job/request`...), answered or refused. */
  count(peer: string, behaviour: { name: string } | string): number
  /** Puts `Actor.prototype.on` back. */
  stop(): void
}

export function watchProviderCalls(
  opts: { withoutFoldedLock?: (peer: string) => boolean } = {},
): ProviderCalls {
  const counts = new Map<string, number>()
  const locked = new Set<string>()
  type On = (this: Actor, b: string | BehaviourDef<unknown, unknown>, fn: Behaviour) => Actor
  const on = (Object.getOwnPropertyDescriptor(Actor.prototype, 'on') as { value: On }).value
  const patched = function (this: Actor, b: string | BehaviourDef<unknown, unknown>, fn: Behaviour): Actor {
    if (this.inbox !== INBOX.provider) return on.call(this, b, fn)
    const name = typeof b === 'string' ? b : b.name
    const wrapped: Behaviour = async (msg: Message) => {
      const peer = this.handle.peer
      counts.set(`${peer} ${name}`, (counts.get(`${peer} ${name}`) ?? 0) + 1)
      if (opts.withoutFoldedLock?.(peer) !== true) return fn(msg)
      if (name === W.contractSign.name) {
        const bidId = (msg.payload as ContractSignRequest).contract?.terms?.bidId
        if (!locked.has(bidId)) throw new RefusedError('BID_NOT_LOCKED', 'bid is offered')
      }
      const reply: unknown = await fn(msg)
      if (name === W.jobRequest.name) locked.add((msg.payload as JobRequest).bidId)
      return reply
    }
    return on.call(this, b, wrapped)
  }
  Object.defineProperty(Actor.prototype, 'on', { value: patched, configurable: true, writable: true })
  return {
    count: (peer, b) => counts.get(`${peer} ${typeof b === 'string' ? b : b.name}`) ?? 0,
    stop: () => {
      Object.defineProperty(Actor.prototype, 'on', { value: on, configurable: true, writable: true })
    },
  }
}
