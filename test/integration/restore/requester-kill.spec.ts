/**
 * A requester SIGKILLed in each live state of a job (bidding, contracting, invoking, running,
 * verifying, settling) and restarted on the same data dir: every job ends with exactly one
 * contract at the contract-db (settled), one run on the provider and one settlement in its books,
 * and every job completes (a result lost with the killed process is asked of the provider again).
 * The kill is the fault injection point DMS_FAULT_KILL_IN_STATE (dms/orchestrator/fault-kill.ts):
 * the process kills itself right after the job's state is stored. The requester runs as its own
 * process (`dms run`); the contract-db and the provider run in-process with CountingExecutor
 * (named as such: these tests count runs, not containers).
 *
 * One process per state: each start restores the job killed before (the kill point only takes
 * jobs posted by that process) and posts the next job; a last start without the fault completes
 * them all.
 */
import assert from 'node:assert/strict'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { ApiClient } from '../../../dms/api/client.js'
import type { NodeConfig } from '../../../dms/config.js'
import { FAULT_KILL_ENV } from '../../../dms/orchestrator/fault-kill.js'
import type { BookEntry } from '../../../dms/provider/books.js'
import { CountingExecutor } from '../../helpers/counting-executor.js'
import { startNetwork, TEST_IMAGE, type TestNetwork } from '../../helpers/network.js'
import { freePort, peerIdOfDataDir, startDms, type DmsProcess } from '../../helpers/processes.js'

const MiB = 1024 * 1024
// `running` last: its provider delivers the result with backoff (about a minute in all) while the
// requester is down, so its job is restored by the last start, a few seconds after the kill.
const STATES = ['bidding', 'contracting', 'invoking', 'verifying', 'settling', 'running'] as const

describe('a requester SIGKILLed in each job state restores idempotently', function () {
  this.timeout(120_000)
  let net: TestNetwork
  let configPath: string
  let proc: DmsProcess | undefined
  const executor = new CountingExecutor(5)
  const jobs = new Map<string, string>() // state killed in -> job id

  before(async () => {
    net = await startNetwork([{ cpu: 4, memoryBytes: 2048 * MiB, perCpuHour: 36_000 }], {
      components: { executor },
    })
    const config: NodeConfig = {
      dataDir: join(net.root, 'requester-proc'),
      oneHost: true,
      listen: [`/ip4/127.0.0.1/tcp/${await freePort()}`],
      bootstrap: [...net.contractDb.addrs(), ...net.providers[0].addrs()],
      requester: {
        contractDb: { peer: net.contractDb.peerId, addrs: net.contractDb.addrs() },
        bidWindowMs: 800,
      },
    }
    configPath = join(net.root, 'requester.json')
    await writeFile(configPath, JSON.stringify(config))
    const peer = await peerIdOfDataDir(config.dataDir)
    await net.contractDb.service.approve(peer)
    await net.contractDb.service.credit(peer, 1_000_000)
  })
  after(async () => {
    if (proc !== undefined && proc.child.exitCode === null && proc.child.signalCode === null) {
      proc.child.kill('SIGKILL')
      await proc.exited
    }
    await net?.stop()
  })

  for (const state of STATES)
    it(`killed at ${state}: the process dies there, with the job stored in ${state}`, async () => {
      proc = await startDms(configPath, 'info', { [FAULT_KILL_ENV]: state })
      // Killed at `bidding`, the process may die before it answers the post: the job is then
      // found in the store after the restart.
      const posted = await new ApiClient(proc.socket!)
        .ok<{ id: string }>('POST', '/v1/jobs', {
          image: TEST_IMAGE,
          command: ['true'],
          resources: { cpu: 0.5, memory: '64MiB' },
          maxDuration: 60,
          maxPrice: 1_000_000,
        })
        .catch(() => undefined)
      jobs.set(state, posted?.id ?? '')
      await proc.exited
      assert.equal(proc.child.signalCode, 'SIGKILL')
    })

  it('restarted without the fault: every job completes with one contract, one run, one settlement', async () => {
    proc = await startDms(configPath)
    const p = proc
    const api = new ApiClient(p.socket!)
    const { jobs: listed } = await api.ok<{ jobs: Array<{ id: string }> }>('GET', '/v1/jobs?limit=100')
    const known = new Set(jobs.values())
    for (const [state, id] of jobs)
      if (id === '') jobs.set(state, listed.find((j) => !known.has(j.id))?.id ?? '')
    assert.equal(listed.length, STATES.length, 'one job per post')
    const ends = new Map<string, string>()
    for (const [state, id] of jobs) {
      const finished = p.logLine((l) => l.msg === 'job finished' && l.jobId === id)
      const now = await api.ok<{ state: string }>('GET', `/v1/jobs/${id}`)
      const end = ['completed', 'failed'].includes(now.state) ? now : await finished
      ends.set(state, String(end.state))
    }
    // Every job completes: one killed after its result came in but before it stored it asks its
    // provider for the result again (`/dms/job/result-again`), kept there until settlement.
    const why = await Promise.all(
      [...jobs].map(async ([state, id]) => [
        state,
        (await api.ok<{ error?: unknown }>('GET', `/v1/jobs/${id}`)).error,
      ]),
    )
    assert.deepEqual(
      [...ends],
      STATES.map((s) => [s, 'completed']),
      JSON.stringify(why),
    )

    const ids = new Set(jobs.values())
    const contracts = (await net.contractDb.service.listContracts()).filter((r) =>
      ids.has(r.contract.terms.jobId),
    )
    // One contract per job, settled once, started once (its provider's start note).
    assert.deepEqual(
      [...ids].map((id) => contracts.filter((r) => r.contract.terms.jobId === id).length),
      [1, 1, 1, 1, 1, 1],
    )
    assert.ok(
      contracts.every((r) => r.state === 'settled' && r.started !== undefined),
      JSON.stringify(contracts.map((r) => [r.state, r.started?.at])),
    )
    assert.equal(executor.runs, STATES.length, 'one run per job')

    // The provider's books: one entry per contract, each with its settlement (told by the contract-db).
    const books = net.providers[0].provider!.books
    const settledIn = async (contractId: string): Promise<BookEntry> => {
      const e = (await books.list()).find((x) => x.contractId === contractId)
      if (e?.settlement !== undefined) return e
      return new Promise((resolve) => {
        const on = (x: BookEntry) => {
          if (x.contractId !== contractId) return
          books.events.off('settled', on)
          resolve(x)
        }
        books.events.on('settled', on)
        // Checked again once listening (it may have come in between).
        void books.list().then((all) => {
          const got = all.find((x) => x.contractId === contractId && x.settlement !== undefined)
          if (got !== undefined) on(got)
        })
      })
    }
    for (const r of contracts) {
      const e = await settledIn(r.contract.terms.contractId)
      assert.deepEqual(e.settlement, r.settlement)
    }
    assert.equal(
      (await books.list()).filter((e) => ids.has(e.jobId)).length,
      STATES.length,
      'one book entry per job',
    )
    // Nothing left delivering on the provider: each result was delivered or fetched again (which
    // counts as delivered) before its job settled, so every allocation is released.
    assert.deepEqual(net.providers[0].provider!.allocationStates(), { released: STATES.length })
  })
})
