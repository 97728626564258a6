/**
 * The restore suite, over one earlier version's fixtures (test/fixtures/<version>/, written by
 * scripts/capture-fixtures.ts from real nodes of that version): each node starts on its own data
 * dir and key, a job left unfinished is restored from its persisted snapshot and carries on (or
 * fails cleanly where its peers are gone), and the provider's and the contract-db's records are
 * read and used. What differs between versions (where the provider kept its bids, what their
 * upgrade must make of them) is the version's `RestoreChecks`.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ContractDbNode } from '../../dms/contract-db/node.js'
import type { Account, ContractRecord } from '../../dms/contract-db/records.js'
import type { Engine, EngineRun } from '../../dms/executor/engine.js'
import type { ExecutionResult, ExecutionSpec } from '../../dms/executor/executor.js'
import { NoopExecutor } from '../../dms/executor/noop.js'
import { DmsNode } from '../../dms/node.js'
import type { StoredJob } from '../../dms/orchestrator/orchestrator.js'
import type { NodeConfig } from '../../dms/config.js'
import { STORES } from '../../dms/store/tables.js'
import {
  clockFrom,
  loadFixture,
  loadManifest,
  recordsOf,
  writeFixture,
  type FixtureManifest,
  type NodeFixture,
} from './fixtures.js'
import { jobReaches, TEST_IMAGE, TEST_PASSPHRASE } from './network.js'

const FINAL = ['completed', 'failed', 'cancelled']
const MiB = 1024 * 1024
const NODES = ['requester', 'provider-0', 'provider-1', 'contract-db'] as const

/**
 * An engine whose one run outlived the process that started it (as a container outlives a
 * `kill -9` of its provider): it lists it, and re-attached, the run completes at once.
 */
class SurvivingEngine extends NoopExecutor {
  /** The specs it was asked to re-attach, in order. */
  readonly reattached: ExecutionSpec[] = []

  constructor(private readonly survivor: Omit<EngineRun, 'handle' | 'running'>) {
    super()
  }
  override listRuns(): Promise<EngineRun[]> {
    return Promise.resolve([{ ...this.survivor, handle: 'survivor', running: true }])
  }
  override async reattach(spec: ExecutionSpec): Promise<ExecutionResult> {
    if (spec.allocationId !== this.survivor.allocationId) return super.reattach(spec)
    this.reattached.push(spec)
    return this.run(spec)
  }
}

/** What one version's provider stored, and what today's code must make of it. */
export interface RestoreChecks {
  /** The allocations a provider's fixture holds for `jobId` (its run's `hold`, as captured). */
  allocations(f: NodeFixture, jobId: string): Array<{ allocationId: string; state: string }>
  /** How many bids a provider's fixture holds (each restored as one record). */
  bidCount(f: NodeFixture): number
  /** More of what the fixture must hold for this version's tests. */
  fixtureHolds?(fx: Record<string, NodeFixture>, manifest: FixtureManifest): void
  /** Checks a provider just started on its fixture `f` (before the requester restarts). */
  providerRestored?(p: DmsNode, f: NodeFixture, manifest: FixtureManifest): Promise<void>
  /** Checks the network once the restored jobs have ended. */
  networkRestored?(
    net: { requester: DmsNode; providers: DmsNode[]; cdb: ContractDbNode; fx: Record<string, NodeFixture> },
    manifest: FixtureManifest,
  ): Promise<void>
}

/** Declares the restore tests of the fixtures of `version` (`title` names the version). */
export function restoreSuite(version: string, title: string, checks: RestoreChecks): void {
  describe(`records stored by ${title} (fixtures ${version})`, function () {
    this.timeout(60_000)
    let root: string
    let manifest: FixtureManifest
    const fx: Record<string, NodeFixture> = {}
    const started: Array<{ stop(): Promise<void> }> = []

    before(async () => {
      manifest = await loadManifest(version)
      for (const n of NODES) fx[n] = await loadFixture(version, n)
    })
    beforeEach(async () => {
      root = await mkdtemp(join(tmpdir(), 'dms-restore-'))
    })
    afterEach(async () => {
      for (const n of started.splice(0).reverse()) await n.stop()
      await rm(root, { recursive: true, force: true })
    })

    const clock = () => clockFrom(manifest.capturedAt + 1000)

    async function node(
      name: string,
      cfg: Omit<NodeConfig, 'dataDir'>,
      executor: Engine = new NoopExecutor(),
    ): Promise<DmsNode> {
      await writeFixture(fx[name], join(root, name))
      const n = new DmsNode(
        { dataDir: join(root, name), oneHost: true, api: false, ...cfg },
        { passphrase: TEST_PASSPHRASE, clock: clock(), executor },
      )
      started.push(n)
      await n.start()
      return n
    }

    it('the fixture holds what the restore tests rely on', () => {
      const jobs = recordsOf<StoredJob>(fx.requester, 'jobs')
      const byId = new Map(jobs.map((j) => [j.record.id, j]))
      assert.equal(byId.get(manifest.jobs.completed)?.state, 'completed')
      assert.equal(byId.get(manifest.jobs.completed)?.snapshot, undefined, 'a final job keeps no snapshot')
      for (const id of [manifest.jobs.running, manifest.jobs.pastBids]) {
        const j = byId.get(id)
        assert.ok(j !== undefined && !FINAL.includes(j.state), `job ${id} is unfinished`)
        assert.equal((j.snapshot as { status?: string }).status, 'active')
      }
      assert.equal(byId.get(manifest.jobs.running)?.state, 'running')
      assert.deepEqual(
        ['provider-0', 'provider-1'].flatMap((p) =>
          checks.allocations(fx[p], manifest.jobs.running).map((a) => a.state),
        ),
        ['running'],
      )
      const contracts = recordsOf<ContractRecord>(fx['contract-db'], 'cdb-contracts')
      assert.deepEqual(contracts.map((c) => c.state).sort(), ['active', 'settled'])
      checks.fixtureHolds?.(fx, manifest)
    })

    it('a requester restored alone: the completed job reads back, the unfinished ones fail cleanly', async () => {
      const requester = await node('requester', {
        // Its contract-db and providers are gone: nothing answers.
        requester: {
          contractDb: { peer: manifest.nodes['contract-db'], addrs: [] },
          livenessTimeoutMs: 1000,
          settleAttempts: 1,
          requestTimeoutMs: 2000,
          bidWindowMs: 500,
          publishAttempts: 1,
        },
      })
      assert.equal(requester.peerId, manifest.nodes.requester)
      const completed = await requester.orchestrator!.get(manifest.jobs.completed)
      assert.equal(completed?.state, 'completed')
      assert.equal(completed?.record.settlement?.outcome, 'settled')
      // Stored before the listing index (0.1) or with it: every job pages (issue 18).
      const stored = recordsOf<StoredJob>(fx.requester, 'jobs')
      const listed = await requester.orchestrator!.page({ limit: 1000 })
      assert.deepEqual(listed.jobs.map((j) => j.record.id).sort(), stored.map((j) => j.record.id).sort())
      const done = await requester.orchestrator!.page({ state: 'completed', limit: 10 })
      assert.ok(done.jobs.some((j) => j.record.id === manifest.jobs.completed))

      const running = await jobReaches(requester, manifest.jobs.running)
      assert.equal(running.state, 'failed')
      // Dropped for silence (a provider fault), then bid again: with no contract-db to prove its
      // funds, no provider would reserve anything for it.
      assert.equal(running.record.attempts?.[0]?.error.code, 'PROVIDER_SILENT')
      assert.equal(running.record.error?.code, 'NO_FUNDS_PROOF')
      const pastBids = await jobReaches(requester, manifest.jobs.pastBids)
      assert.equal(pastBids.state, 'failed')
      assert.equal(typeof pastBids.record.error?.code, 'string')
    })

    /**
     * The contract-db, both providers and the requester started on their fixtures, in that order,
     * each checked as it starts (its records load); `executorOf` gives each provider its engine.
     */
    async function network(executorOf: (name: string) => Engine = () => new NoopExecutor()) {
      const cdbFixture = fx['contract-db']
      await writeFixture(cdbFixture, join(root, 'contract-db'))
      const cdb = new ContractDbNode(
        { dataDir: join(root, 'contract-db'), oneHost: true, socket: false },
        { clock: clock(), passphrase: TEST_PASSPHRASE },
      )
      started.push(cdb)
      await cdb.start()
      assert.equal(cdb.peerId, manifest.nodes['contract-db'])
      // The contract-db's records load: approvals, accounts, contracts.
      assert.equal(
        (await cdb.service.listApproved()).length,
        Object.keys(cdbFixture.sublevels['cdb-approved']).length,
      )
      const accountsBefore = recordsOf<Account>(cdbFixture, 'cdb-accounts')
      assert.deepEqual(
        (await cdb.service.listAccounts()).sort((a, b) => a.peer.localeCompare(b.peer)),
        [...accountsBefore].sort((a, b) => a.peer.localeCompare(b.peer)),
      )
      // The credited total: read back where it was stored, or (0.1 stored none) taken at the first
      // start from what the accounts hold.
      const held = accountsBefore.reduce((n, a) => n + a.balance + a.escrow, 0)
      const storedBooks = cdbFixture.sublevels[STORES.cdbBooks.name]?.credited as
        { initialisedWith: number } | undefined
      const books = await cdb.service.conservation()
      assert.deepEqual(
        [books.ok, books.credited, books.initialisedWith],
        [true, held, storedBooks?.initialisedWith ?? held],
      )
      const cdbPeer = { peer: cdb.peerId, addrs: cdb.addrs() }

      const providers: DmsNode[] = []
      for (const name of ['provider-0', 'provider-1']) {
        const p = await node(
          name,
          {
            bootstrap: cdbPeer.addrs,
            provider: {
              contractDb: cdb.peerId,
              offer: {
                cpu: 1,
                memoryBytes: 1,
                diskBytes: 1,
                gpus: 0,
                prices: {
                  perCpuHour: 1,
                  perGiBMemoryHour: 1,
                  perGiBDiskHour: 0,
                  perGpuHour: 0,
                  minJobPrice: 1,
                },
              },
            },
          },
          executorOf(name),
        )
        assert.equal(p.peerId, manifest.nodes[name])
        // The stored offer wins over the config's, and the bid records load.
        assert.deepEqual(
          p.ledger?.getOffer(),
          fx[name].sublevels.offer?.[Object.keys(fx[name].sublevels.offer)[0]],
        )
        assert.equal((await p.provider!.bids.values()).length, checks.bidCount(fx[name]))
        await checks.providerRestored?.(p, fx[name], manifest)
        providers.push(p)
      }
      const requester = await node('requester', {
        bootstrap: [...cdbPeer.addrs, ...providers.flatMap((p) => p.addrs())],
        requester: { contractDb: cdbPeer },
      })
      return { cdb, providers, requester, accountsBefore }
    }

    it('the whole network restored: the running job is settled as lost, every record is used', async () => {
      const { cdb, providers, requester, accountsBefore } = await network()
      // The running job's provider restarted without its container: the run is reported lost,
      // and the requester settles it (nothing paid for a run that never finished).
      const running = await jobReaches(requester, manifest.jobs.running)
      assert.equal(running.state, 'failed')
      assert.equal(running.record.error?.code, 'RUN_FAILED')
      assert.equal(running.record.settlement?.outcome, 'settled')
      assert.equal(running.record.settlement?.paidToProvider, 0)
      const contractId = running.record.contract!.terms.contractId
      assert.equal((await cdb.service.contract(contractId))?.state, 'settled')
      const winner = providers.find((p) => p.peerId === running.record.winner?.provider)!
      const alloc = (await winner.provider!.allocations.repo.values()).find(
        (a) => a.jobId === manifest.jobs.running,
      )
      assert.equal(alloc?.state, 'released')

      // The job caught before its contract carries on from its stored state (its reservations at
      // the providers are still valid on the nodes' clock): normally to the end of the journey.
      const pastBids = await jobReaches(requester, manifest.jobs.pastBids)
      const stored = recordsOf<StoredJob>(fx.requester, 'jobs').find(
        (j) => j.record.id === manifest.jobs.pastBids,
      )!
      assert.deepEqual(pastBids.record.history.slice(0, stored.record.history.length), stored.record.history)
      assert.ok(pastBids.record.history.length > stored.record.history.length + 1)
      assert.ok(FINAL.includes(pastBids.state))
      if (pastBids.state === 'completed')
        assert.equal(
          (await cdb.service.contract(pastBids.record.contract!.terms.contractId))?.state,
          'settled',
        )
      // Money is conserved across the restart: every micro-token is in a balance or an escrow.
      const total = (as: Account[]) => as.reduce((n, a) => n + a.balance + a.escrow, 0)
      assert.equal(total(await cdb.service.listAccounts()), total(accountsBefore))
      await checks.networkRestored?.({ requester, providers, cdb, fx }, manifest)
    })

    it("the whole network restored, the running job's run still there: re-attached, it completes and its contract settles as signed", async () => {
      const [held] = (['provider-0', 'provider-1'] as const).flatMap((name) =>
        checks.allocations(fx[name], manifest.jobs.running).map((a) => ({ name, ...a })),
      )
      const engine = new SurvivingEngine({ allocationId: held.allocationId, jobId: manifest.jobs.running })
      const { cdb, requester, accountsBefore } = await network((name) =>
        name === held.name ? engine : new NoopExecutor(),
      )
      const running = await jobReaches(requester, manifest.jobs.running)
      assert.equal(running.state, 'completed')
      // What was re-attached is what the stored records say runs: the captured `hold` job.
      assert.deepEqual(
        engine.reattached.map((s) => [
          s.allocationId,
          s.workload.members.map((m) => [m.artifact, m.command, m.resources]),
        ]),
        [
          [
            held.allocationId,
            [[{ kind: 'image', ref: TEST_IMAGE }, ['hold'], { cpu: 0.5, memoryBytes: 64 * MiB }]],
          ],
        ],
      )
      // The contract, stored as that version signed it, is verified and settled by its terms: the
      // provider is paid from its escrow, what is left goes back to the requester.
      const contractId = running.record.contract!.terms.contractId
      const stored = recordsOf<ContractRecord>(fx['contract-db'], STORES.cdbContracts.name).find(
        (c) => c.contract.terms.contractId === contractId,
      )!
      assert.equal(stored.state, 'active')
      const closed = (await cdb.service.contract(contractId))!
      assert.equal(closed.state, 'settled')
      assert.deepEqual(closed.contract, stored.contract)
      const paid = running.record.settlement!.paidToProvider
      assert.equal(running.record.settlement?.outcome, 'settled')
      assert.ok(paid > 0 && paid <= stored.contract.terms.escrow, `paid ${paid}`)

      // The other job ends too; then every account moved by exactly what the two settlements say.
      const pastBids = await jobReaches(requester, manifest.jobs.pastBids)
      assert.ok(FINAL.includes(pastBids.state))
      const payments = new Map<string, number>()
      for (const j of [running, pastBids]) {
        const to = j.record.winner?.provider
        if (to !== undefined && j.record.settlement !== undefined)
          payments.set(to, (payments.get(to) ?? 0) + j.record.settlement.paidToProvider)
      }
      const paidTotal = [...payments.values()].reduce((n, p) => n + p, 0)
      const before = new Map(accountsBefore.map((a) => [a.peer, a]))
      const after = new Map((await cdb.service.listAccounts()).map((a) => [a.peer, a]))
      const total = (a: Account | undefined) => (a === undefined ? 0 : a.balance + a.escrow)
      for (const peer of new Set([...before.keys(), ...after.keys()])) {
        const expected = (payments.get(peer) ?? 0) - (peer === manifest.nodes.requester ? paidTotal : 0)
        assert.equal(total(after.get(peer)) - total(before.get(peer)), expected, `account ${peer}`)
      }
      assert.equal(after.get(manifest.nodes.requester)?.escrow, 0, 'no escrow held for ended jobs')
    })
  })
}
