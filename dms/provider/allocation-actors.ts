/**
 * Each allocation is its own actor, `alloc/<allocationId>`, with a key generated for it: its
 * updates, logs and result come from it (receipts are still signed with the node key). Spawned on
 * first use, stopped once the allocation is released. Each step of an allocation is reported to
 * its requester as a `/dms/job/update` once it is stored. Spec: specs/protocol.md ("Behaviours").
 */
import type { Handle } from '../../actors/envelope.js'
import { KeyPair } from '../../actors/identity.js'
import type { Actor, ActorSystem } from '../../actors/system.js'
import { W } from '../protocol/behaviours.js'
import { allocationInbox } from '../protocol/handles.js'
import type { JobUpdate } from '../protocol/messages.js'
import { ALLOCATION_STATES, type HistoryEntry } from './bid-context.js'

const OUTCOMES = new Set(['completed', 'failed', 'timed_out', 'cancelled'])
import type { StoredBid } from './bid-store.js'
import { clip } from './publish.js'

export class AllocationActors {
  private readonly actors = new Map<string, { actor: Actor; sent: Promise<unknown> }>()

  constructor(private readonly system: ActorSystem) {}

  /** The allocation's actor, spawned on first use. */
  get(allocationId: string): Actor {
    return this.entry(allocationId).actor
  }

  private entry(allocationId: string) {
    let e = this.actors.get(allocationId)
    if (e === undefined) {
      e = {
        actor: this.system.spawn(allocationInbox(allocationId), KeyPair.generate()),
        sent: Promise.resolve(),
      }
      this.actors.set(allocationId, e)
    }
    return e
  }

  /** Sends `update` after every update queued before it (best effort); resolves once it is sent. */
  send(allocationId: string, to: Handle, update: JobUpdate): Promise<void> {
    const e = this.entry(allocationId)
    const sent = e.sent.then(() => e.actor.send(to, W.update, update).catch(() => {}))
    e.sent = sent
    return sent
  }

  /**
   * Sends the requester an update for each step the stored transition added (best effort, in
   * order); once the allocation is released, stops its actor after the last one. An outcome's
   * update is sent by its delivery, just before the result.
   */
  report(rec: StoredBid, added: HistoryEntry[]): void {
    const ctx = rec.snapshot.context
    const a = ctx.allocation
    if (a === undefined) return
    const steps = added.filter((h) => ALLOCATION_STATES.has(h.state) && !OUTCOMES.has(h.state))
    if (steps.length === 0 && rec.state !== 'released') return
    const e = this.entry(a.allocationId)
    for (const h of steps)
      void this.send(a.allocationId, ctx.requester, {
        jobId: ctx.bid.jobId,
        allocationId: a.allocationId,
        state: h.state,
        at: h.at,
        detail: clip(h.detail),
      })
    if (rec.state === 'released') {
      this.actors.delete(a.allocationId)
      void e.sent.finally(() => e.actor.stop())
    }
  }

  /** Stops every allocation actor (after the updates already queued). */
  async stop(): Promise<void> {
    const all = [...this.actors.values()]
    this.actors.clear()
    await Promise.all(all.map((e) => e.sent))
    for (const e of all) e.actor.stop()
  }
}
