/**
 * What the provider records of a run's result (outcomes.ts), with the real delivery actor over the
 * bid book on a real level database (fake runs, ManualClock): the result is kept for
 * `/dms/job/result-again` and its receipt booked before it is sent, also when it is delivered at
 * once and the bid is released before its outcome record is ever written (writes are coalesced:
 * the stored transitions may never show the outcome state with its result).
 */
import { container } from '../../helpers/workload.js'
import assert from 'node:assert/strict'
import { EventEmitter } from 'node:events'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { waitFor } from 'xstate'
import { ManualClock } from '../../../actors/clock.js'
import { silentLogger } from '../../../dms/log.js'
import { deliverActor } from '../../../dms/provider/bid-actors.js'
import { BidBook } from '../../../dms/provider/bid-book.js'
import { KeptResults } from '../../../dms/provider/kept-results.js'
import { keepOutcome } from '../../../dms/provider/outcomes.js'
import { openDb } from '../../../dms/store/db.js'
import { bidContext, completedRun, contractFor, Fakes, REQUESTER } from '../../helpers/provider-fakes.js'

describe('provider/outcomes', () => {
  it('a result delivered at once was kept and booked before it was sent', async () => {
    const clock = new ManualClock()
    const fakes = new Fakes()
    const dir = await mkdtemp(join(tmpdir(), 'dms-outcomes-'))
    const db = await openDb(join(dir, 'db'))
    const results = new KeptResults(db, clock)
    const events: string[] = []
    const books = {
      resulted: (id: string) => Promise.resolve(void events.push(`booked ${id}`)),
      events: new EventEmitter(),
    }
    const keep = { books, results, log: silentLogger }
    const deliver = deliverActor({
      clock,
      log: silentLogger,
      stopping: () => false,
      sendUpdate: async () => {},
      actorFor: () =>
        ({
          // The requester has it now: it may be killed before it stores it.
          send: async () => void events.push(`sent, kept: ${(await results.get('contract-1'))?.jobId}`),
        }) as never,
      keepResult: (id, peer, m) => keepOutcome(keep, id, peer, m),
    })
    const book = new BidBook({
      db,
      clock,
      log: silentLogger,
      machine: fakes.machine(clock).provide({ actors: { deliver } }),
    })
    await book.start()
    const actor = await book.create(bidContext(clock.now()))
    actor.send({ type: 'LOCK' })
    await waitFor(actor, (s) => s.matches('locked'))
    actor.send({ type: 'SIGN', contractId: 'contract-1', contractHash: 'h' })
    actor.send({
      type: 'INVOKE',
      allocation: {
        allocationId: 'alloc-1',
        contract: contractFor(actor.getSnapshot().context.bid),
        workload: container({ image: 'dms-test:1', command: ['x'], cpu: 1, memoryBytes: 64 * 1024 * 1024 }),
        inputs: [],
      },
    })
    await waitFor(actor, (s) => s.matches({ active: 'provisioning' }))
    fakes.runs.get('alloc-1')!.started()
    fakes.runs.get('alloc-1')!.finish(completedRun())
    await waitFor(actor, (s) => s.status === 'done')
    await book.persisted('bid-1')
    assert.equal((await book.get('bid-1'))?.state, 'released')
    assert.deepEqual(events, ['booked contract-1', 'sent, kept: job-1'])
    const kept = await results.get('contract-1')
    assert.equal(kept?.requester, REQUESTER, 'kept for the contract’s requester only')
    await book.stop()
    await db.close()
    await rm(dir, { recursive: true, force: true })
  })
})
