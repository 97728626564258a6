/**
 * Each allocation is its own actor, `alloc/<allocationId>`, with a key generated for it: its
 * updates, logs and result come from it (receipts are still signed with the node key). Spawned on
 * first use, stopped once the allocation is released. Each step of an allocation is reported to
 * its requester as a `/dms/job/update` once it is stored. Spec: specs/protocol.md ("Behaviours").
 */
import { KeyPair } from '../../actors/identity.js'
import type { Actor, ActorSystem } from '../../actors/system.js'
import { W } from '../protocol/behaviours.js'
import { allocationInbox } from '../protocol/handles.js'
import type { JobUpdate } from '../protocol/messages.js'
import { ALLOCATION_STATES, type HistoryEntry } from './bid-context.js'
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

  /**
   * Sends the requester an update for each step the stored transition added (best effort, in
   * order); once the allocation is released, stops its actor after the last one.
   */
  report(rec: StoredBid, added: HistoryEntry[]): void {
    const ctx = rec.snapshot.context
    const a = ctx.allocation
    if (a === undefined) return
    const steps = added.filter((h) => ALLOCATION_STATES.has(h.state))
    if (steps.length === 0 && rec.state !== 'released') return
    const e = this.entry(a.allocationId)
    for (const h of steps) {
      const update: JobUpdate = {
        jobId: ctx.bid.jobId,
        allocationId: a.allocationId,
        state: h.state,
        at: h.at,
        detail: clip(h.detail),
      }
      e.sent = e.sent.then(() => e.actor.send(ctx.requester, W.update, update).catch(() => {}))
    }
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
