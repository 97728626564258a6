/**
 * The provider's start note (start-note.ts) and the run that waits for it (allocation-run.ts):
 * the note is signed by the provider and sent before the executor runs; a refusal
 * START_DEADLINE_PASSED ends the run not started, the executor never called (past startBy the
 * contract-db still decides: a note recorded before a restart is answered again and the run goes on); a contract with no startBy (dms 0.1) sends none. The executor is NoopExecutor (named as
 * such: no container is needed to count runs), the contract-db a fake client.
 */
import { container } from '../../helpers/workload.js'
import assert from 'node:assert/strict'
import { createActor, setup } from 'xstate'
import { ManualClock } from '../../../actors/clock.js'
import { RefusedError } from '../../../actors/errors.js'
import { verifyDoc } from '../../../dms/contracts/canonical.js'
import type { ContractDbClient } from '../../../dms/contract-clients/client.js'
import { DOMAIN, type SignedContract, type SignedStartNote } from '../../../dms/contracts/model.js'
import { NoopExecutor } from '../../../dms/executor/noop.js'
import { silentLogger } from '../../../dms/log.js'
import { executeActor } from '../../../dms/provider/allocation-run.js'
import type { BidEvent } from '../../../dms/provider/bid-context.js'
import { startNoteSender } from '../../../dms/provider/start-note.js'
import { makeContract, newParty } from '../../helpers/contracts.js'

const T0 = 1_800_000_000_000

describe('provider start note', () => {
  const req = newParty()
  const prov = newParty()

  /** Runs one allocation of `contract` through the execute actor; resolves with its RAN result. */
  function runWith(contract: SignedContract, answer: (n: SignedStartNote) => Promise<unknown>) {
    const clock = new ManualClock(T0)
    const executor = new NoopExecutor()
    const notes: SignedStartNote[] = []
    const client = {
      started: (note: SignedStartNote) => {
        notes.push(note)
        return answer(note)
      },
    } as unknown as ContractDbClient
    const startNote = startNoteSender({ key: prov.key, peerId: () => prov.peer, clock, client: () => client })
    const logic = executeActor({
      executor,
      blobs: {} as never,
      clock,
      log: silentLogger,
      workDir: '/nonexistent-dms-test',
      actorFor: () => ({ send: () => Promise.resolve() }) as never,
      startNote,
    })
    const input = {
      bidId: 'b',
      requester: { peer: req.peer, inbox: 'job/x' } as never,
      allocation: {
        allocationId: 'a-1',
        contract,
        workload: container({
          image: 'dms-test:1',
          command: ['true'],
          cpu: 1,
          memoryBytes: 64 * 1024 * 1024,
        }),
        inputs: [],
        diskBytes: 0,
        invokedAt: T0,
        provisionBy: T0 + 60_000,
      },
    }
    // A parent machine that invokes the execute actor and keeps what it sends back.
    const events: BidEvent[] = []
    const parent = createActor(
      setup({ actors: { execute: logic } }).createMachine({
        invoke: { src: 'execute', input },
        on: { '*': { actions: ({ event }) => events.push(event as BidEvent) } },
      }),
    )
    const ran = new Promise<Extract<BidEvent, { type: 'RAN' }>>((resolve) => {
      parent.subscribe(() => {
        const e = events.find((x) => x.type === 'RAN')
        if (e !== undefined) resolve(e)
      })
    })
    parent.start()
    return { executor, notes, ran }
  }

  it('signs the note as the provider, and reports START_DEADLINE_PASSED from the contract-db', async () => {
    const c = makeContract(req, prov, 'cdb', { now: T0, startBy: T0 + 120_000 })
    const notes: SignedStartNote[] = []
    const client = {
      started: (note: SignedStartNote) => {
        notes.push(note)
        return Promise.reject(new RefusedError('START_DEADLINE_PASSED', 'expired'))
      },
    } as unknown as ContractDbClient
    const clock = new ManualClock(T0)
    const startNote = startNoteSender({ key: prov.key, peerId: () => prov.peer, clock, client: () => client })
    await assert.rejects(startNote(c, new AbortController().signal), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'START_DEADLINE_PASSED')
      return true
    })
    assert.equal(notes.length, 1)
    const n = notes[0]
    assert.deepEqual(n.note, { contractId: c.terms.contractId, provider: prov.peer, at: T0 })
    assert.ok(verifyDoc(prov.key.publicKey, DOMAIN.startNote, n.note, n.signature))
  })

  it('the run waits for the note: recorded, the executor runs; refused, it never runs', async () => {
    const c = makeContract(req, prov, 'cdb', { now: T0, startBy: T0 + 120_000 })
    const ok = runWith(c, (n) => Promise.resolve({ contractId: n.note.contractId, startedAt: T0 }))
    const done = await ok.ran
    assert.deepEqual([done.result.status, ok.executor.runs, ok.notes.length], ['completed', 1, 1])

    const refused = runWith(c, () => Promise.reject(new RefusedError('START_DEADLINE_PASSED', 'expired')))
    const failed = await refused.ran
    assert.equal(failed.result.status, 'failed')
    assert.match(
      failed.result.stderr + (failed.result as { reason?: string }).reason,
      /START_DEADLINE_PASSED/,
    )
    assert.equal(refused.executor.runs, 0, 'no container started')
  })

  it('past startBy the contract-db decides: a note it recorded before a restart runs, a first one does not; no startBy, no note', async () => {
    const lateContract = makeContract(req, prov, 'cdb', { now: T0 - 200_000, startBy: T0 - 1 })
    const recorded = runWith(lateContract, (n) =>
      Promise.resolve({ contractId: n.note.contractId, startedAt: T0 - 100_000 }),
    )
    assert.equal(
      (await recorded.ran).result.status,
      'completed',
      'the contract is active and paid for: it runs',
    )
    assert.deepEqual([recorded.notes.length, recorded.executor.runs], [1, 1])
    const first = runWith(lateContract, () =>
      Promise.reject(new RefusedError('START_DEADLINE_PASSED', 'expired')),
    )
    assert.equal((await first.ran).result.status, 'failed')
    assert.deepEqual([first.notes.length, first.executor.runs], [1, 0])
    const old = runWith(makeContract(req, prov, 'cdb', { now: T0 }), () => Promise.reject(new Error('never')))
    assert.equal((await old.ran).result.status, 'completed')
    assert.deepEqual([old.notes.length, old.executor.runs], [0, 1])
  })
})
