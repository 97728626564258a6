/**
 * The job store on a real level database: every transition of a job's machine is written in
 * order and told to the listeners after its write; the record is stored once (the snapshot keeps
 * no context); a final job keeps no snapshot and `onDone` runs after its write; a restored
 * machine is returned at once.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createActor } from 'xstate'
import { ManualClock } from '../../../actors/clock.js'
import { silentLogger } from '../../../dms/log.js'
import {
  ContractRefusal,
  createJobMachine,
  type JobSteps,
  type Step,
} from '../../../dms/orchestrator/job-machine.js'
import { JobStore, type StoredJob } from '../../../dms/orchestrator/job-store.js'
import {
  persistedWithoutContext,
  restoredSnapshot,
  storedSnapshot,
} from '../../../dms/orchestrator/job-snapshot.js'
import { openDb, type Db } from '../../../dms/store/db.js'
import { jobRecord, signedBid, T0 } from '../../helpers/steps.js'
import { newParty } from '../../helpers/contracts.js'

describe('orchestrator/job-store', () => {
  let dir: string
  let db: Db
  let store: JobStore
  const clock = new ManualClock(T0)
  const turn = () => new Promise((r) => setImmediate(r))

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dms-job-store-'))
    db = await openDb(join(dir, 'db'))
    store = new JobStore({ db, log: silentLogger })
  })
  afterEach(async () => {
    await db.close()
    await rm(dir, { recursive: true, force: true })
  })

  /** Steps that each wait to be ended by hand: `release(name, patch)` or `refuse(name, err)`. */
  function gatedSteps() {
    const gates = new Map<string, { resolve: (patch: object) => void; reject: (err: Error) => void }>()
    const gate =
      (name: string): Step =>
      () =>
        new Promise((resolve, reject) => gates.set(name, { resolve, reject }))
    const steps = Object.fromEntries(
      [
        'collectBids',
        'requestLock',
        'closeContract',
        'invoke',
        'awaitResult',
        'verify',
        'settle',
        'cancel',
      ].map((n) => [n, gate(n)]),
    ) as unknown as JobSteps
    const ended = async (name: string) => {
      while (!gates.has(name)) await turn()
      const g = gates.get(name)!
      gates.delete(name)
      return g
    }
    return {
      steps,
      release: async (name: string, patch: object = {}) => (await ended(name)).resolve(patch),
      refuse: async (name: string, err: Error) => (await ended(name)).reject(err),
    }
  }

  it('writes every transition in order, tells listeners after each write, and runs onDone last', async () => {
    const { steps, release, refuse } = gatedSteps()
    const machine = createActor(createJobMachine(steps, clock), { input: jobRecord() })
    const events: string[] = []
    const write = store.write.bind(store)
    store.write = async (job, prev) => {
      // A slow write: the next transition's write must still wait for it.
      if (job.state === 'contracting') for (let i = 0; i < 20; i++) await turn()
      await write(job, prev)
      events.push(`stored ${job.state}`)
    }
    store.onChange((job) => events.push(`told ${job.state}`))
    const stored = await store.start('job-1', machine, {
      onDone: async () => {
        events.push(`done, stored ${(await store.get('job-1'))?.state}`)
      },
    })
    assert.equal(stored.state, 'bidding', 'resolved once the first state is stored')
    assert.equal((await store.get('job-1'))?.state, 'bidding')

    // One bid: -> contracting (through selecting); its lock refused, no bid left: -> failed.
    await release('collectBids', { bids: [signedBid(newParty(), 'job-1')] })
    const declined = new ContractRefusal('BID_NOT_OPEN', 'declined', { provider: 'p', bidId: 'b' }, 'lock')
    await refuse('closeContract', declined) // while `contracting` is still being written
    while (events.length < 7) await turn()
    assert.deepEqual(events, [
      'stored bidding',
      'told bidding',
      'stored contracting',
      'told contracting',
      'stored failed',
      'told failed',
      'done, stored failed',
    ])
    const final = (await store.get('job-1')) as StoredJob
    assert.equal(final.record.error?.code, 'NO_PROVIDER_ACCEPTED')
    assert.equal(final.snapshot, undefined, 'a final job keeps no snapshot')
  })

  it('written: resolves once the transitions so far are stored; rejects JOB_NOT_STORED when the last write failed', async () => {
    const { steps, release } = gatedSteps()
    const machine = createActor(createJobMachine(steps, clock), { input: jobRecord() })
    const write = store.write.bind(store)
    let full = false
    const stored: string[] = []
    store.write = async (job, prev) => {
      for (let i = 0; i < 5; i++) await turn()
      if (full) throw new Error('ENOSPC: no space left on device')
      await write(job, prev)
      stored.push(job.state)
    }
    await store.start('job-1', machine, { onDone: async () => {} })
    await release('collectBids', { bids: [signedBid(newParty(), 'job-1')] })
    await store.written('job-1')
    assert.deepEqual(stored, ['bidding', 'contracting'], 'contracting stored before written resolves')
    full = true
    await release('closeContract', {})
    await assert.rejects(store.written('job-1'), { code: 'JOB_NOT_STORED', message: /ENOSPC/ })
    await store.written('job-2') // not running here: at once
  })

  it('stores the record once: the snapshot of an unfinished job has no context', async () => {
    const { steps } = gatedSteps()
    const p = newParty()
    const record = jobRecord({ bids: [signedBid(p, 'job-1')] })
    const machine = createActor(createJobMachine(steps, clock), { input: record })
    await store.start('job-1', machine, { onDone: () => Promise.resolve() })
    const raw = JSON.parse((await db.sublevel('jobs').get('job-1')) as string) as StoredJob
    const snapshot = raw.snapshot as { status: string; value: string; context?: unknown }
    assert.equal(snapshot.status, 'active')
    assert.equal(snapshot.value, 'bidding')
    assert.equal(snapshot.context, undefined)
    assert.equal(raw.record.bids[0].provider, p.peer)
    machine.stop()
  })

  it("stores the same snapshot as xstate's own persisted one without its context, made without walking the context", async () => {
    const gated = gatedSteps()
    const p = newParty()
    const record = jobRecord({ bids: [signedBid(p, 'job-1')] })
    const machine = createActor(createJobMachine(gated.steps, clock), { input: record })
    await store.start('job-1', machine, { onDone: () => Promise.resolve() })
    await gated.release('collectBids', { bids: [signedBid(p, 'job-1')] })
    while ((await store.get('job-1'))?.state !== 'contracting') await turn()
    const snap = machine.getSnapshot()
    const full = storedSnapshot(machine.getPersistedSnapshot(), snap.context)
    const stored = (await store.get('job-1')) as StoredJob
    assert.deepEqual(stored.snapshot, JSON.parse(JSON.stringify(full)))
    // The context is never walked: a getter in it would be read by a walk.
    let read = false
    const watched = Object.defineProperty({ ...snap.context }, 'probe', {
      enumerable: true,
      get: () => ((read = true), {}),
    })
    persistedWithoutContext(machine, { ...snap, context: watched })
    assert.equal(read, false)
    machine.stop()
  })

  it('a machine restored from its stored snapshot is returned at once, as it was', async () => {
    const first = gatedSteps()
    const m1 = createActor(createJobMachine(first.steps, clock), { input: jobRecord() })
    await store.start('job-1', m1, { onDone: () => Promise.resolve() })
    m1.stop()
    const stored = (await store.get('job-1')) as StoredJob
    const again = gatedSteps()
    const m2 = createActor(createJobMachine(again.steps, clock), {
      input: stored.record,
      snapshot: { ...(stored.snapshot as object), context: stored.record } as never,
    })
    const job = await store.start('job-1', m2, { restored: stored, onDone: () => Promise.resolve() })
    assert.equal(job.state, 'bidding')
    assert.equal(job.record.id, 'job-1')
    // Its step runs again (xstate restarts the invoked promise).
    await again.release('collectBids', { bids: [] })
    while ((await store.get('job-1'))?.state !== 'failed') await turn()
  })

  it("stores no copy of the record in its steps' inputs, and a restored step gets the record as its input", async () => {
    const first = gatedSteps()
    const p = newParty()
    const record = jobRecord({ bids: [signedBid(p, 'job-1')] })
    const m1 = createActor(createJobMachine(first.steps, clock), { input: record })
    await store.start('job-1', m1, { onDone: () => Promise.resolve() })
    m1.stop()
    const raw = (await db.sublevel('jobs').get('job-1')) as string
    // The bid's signature is in the stored job once: in the record, not again in the step's input.
    assert.equal(raw.split(record.bids[0].signature).length - 1, 1)
    const stored = (await store.get('job-1')) as StoredJob
    let input: unknown
    const again = gatedSteps()
    const steps = {
      ...again.steps,
      collectBids: (i: unknown, signal: AbortSignal) => {
        input = i
        return again.steps.collectBids(i as never, signal)
      },
    } as JobSteps
    const m2 = createActor(createJobMachine(steps, clock), {
      input: stored.record,
      snapshot: restoredSnapshot(stored.snapshot, stored.record) as never,
    })
    await store.start('job-1', m2, { restored: stored, onDone: () => Promise.resolve() })
    while (input === undefined) await turn()
    assert.deepEqual(input, stored.record)
    m2.stop()
  })
})
