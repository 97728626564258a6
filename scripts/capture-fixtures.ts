/**
 * Captures the records a DMS node stores, as fixtures for the restore tests
 * (test/integration/restore/): real nodes on 127.0.0.1 (a contract-db, two providers with a
 * stand-in executor, a requester), a few jobs driven into known states, then every level record
 * of every node dumped as JSON, grouped by sublevel, with the node's sealed key.
 *
 *   node --import tsx --import ./actors/polyfill.ts scripts/capture-fixtures.ts <outDir>
 *   outDir: a new directory (e.g. test/fixtures/v0.3); an existing one is refused, so the fixtures
 *   of an earlier version are never overwritten by today's records
 *
 * What is captured (each node's database is read while the nodes run, as a kill -9 would leave it):
 * - requester: job A completed (final, no snapshot), job B `running` (its provider's allocation
 *   running too) and job C between bidding and its contract, each non-final one with its persisted
 *   xstate snapshot; provider records; the approval credential.
 * - providers: bids (invoked, released, offered or locked), allocations (released, running),
 *   ledger entries (allocated, reserved or locked), the onboarded offer.
 * - contract-db: contracts (settled, active), accounts, approvals.
 *
 * Keys are sealed with the test passphrase ('test passphrase'); the stand-in executor runs
 * nothing (like NoopExecutor) and holds the run of any job whose command is `hold` until stopped.
 */
import '../actors/polyfill.js'
import { existsSync } from 'node:fs'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Db } from '../dms/store/db.js'
import type { DmsNode } from '../dms/node.js'
import type { ExecutionResult, ExecutionSpec, RunOptions } from '../dms/executor/executor.js'
import { NoopExecutor } from '../dms/executor/noop.js'
import { parseJobSpec } from '../dms/orchestrator/job-spec.js'
import type { StoredJob } from '../dms/orchestrator/orchestrator.js'
import type { NodeFixture } from '../test/helpers/fixtures.js'
import { jobReaches, startNetwork, TEST_IMAGE } from '../test/helpers/network.js'

const MiB = 1024 * 1024
const OUT = process.argv[2]
if (OUT === undefined || OUT === '') {
  process.stderr.write('usage: capture-fixtures.ts <outDir> (a new directory, e.g. test/fixtures/v0.3)\n')
  process.exit(2)
}
if (existsSync(OUT)) {
  process.stderr.write(
    `capture-fixtures: ${OUT} exists; fixtures of an earlier version are never overwritten\n`,
  )
  process.exit(2)
}

// Bounded: whatever happens, the process ends.
setTimeout(() => {
  process.stderr.write('capture-fixtures: 2 minutes passed, exiting\n')
  process.exit(3)
}, 120_000).unref()

/** Runs nothing; a job whose command is `hold` stays running until its run is aborted. */
class HoldingExecutor extends NoopExecutor {
  override async run(spec: ExecutionSpec, options: RunOptions = {}): Promise<ExecutionResult> {
    if (spec.workload.members[0].command[0] !== 'hold') return super.run(spec, options)
    options.onEvent?.({ type: 'started' })
    await new Promise<void>((resolve) => options.signal?.addEventListener('abort', () => resolve()))
    return { ...(await super.run(spec, {})), status: 'cancelled', exitCode: 137 }
  }
}

async function dump(db: Db): Promise<Pick<NodeFixture, 'sublevels' | 'raw'>> {
  const sublevels: NodeFixture['sublevels'] = {}
  const raw: Record<string, string[]> = {}
  for await (const [k, v] of db.iterator()) {
    const m = /^!([^!]+)!(.*)$/s.exec(k)
    if (m === null) throw new Error(`a key outside any sublevel: ${k}`)
    const [, sub, key] = m
    let value: unknown = v
    try {
      const parsed = JSON.parse(v) as unknown
      if (JSON.stringify(parsed) === v) value = parsed
      else (raw[sub] ??= []).push(key)
    } catch {
      ;(raw[sub] ??= []).push(key)
    }
    ;(sublevels[sub] ??= {})[key] = value
  }
  return Object.keys(raw).length > 0 ? { sublevels, raw } : { sublevels }
}

/** Resolves when `pred` holds for a change of job `id` (checked on every persisted change). */
function jobChange(node: DmsNode, id: () => string | undefined, pred: (j: StoredJob) => boolean) {
  return new Promise<StoredJob>((resolve) => {
    const off = node.orchestrator!.onChange((j) => {
      if (j.record.id === id() && pred(j)) {
        off()
        resolve(j)
      }
    })
  })
}

async function main(): Promise<void> {
  const executor = new HoldingExecutor()
  const net = await startNetwork(
    [
      { cpu: 2, memoryBytes: 1024 * MiB, perCpuHour: 1000 },
      { cpu: 2, memoryBytes: 1024 * MiB, perCpuHour: 2000 },
    ],
    { components: { executor }, requester: { bidWindowMs: 3000, enoughBids: 2 } },
  )
  try {
    const orch = net.requester.orchestrator!
    const spec = (command: string[]) =>
      parseJobSpec({
        image: TEST_IMAGE,
        command,
        resources: { cpu: 0.5, memory: '64MiB' },
        maxDuration: 600,
        maxPrice: 1_000_000,
      })

    // A: a whole journey, to `completed`.
    const a = await orch.post(spec(['sh', '-c', 'echo a']))
    const doneA = await jobReaches(net.requester, a.record.id)
    if (doneA.state !== 'completed')
      throw new Error(`job A ${doneA.state}: ${JSON.stringify(doneA.record.error)}`)

    // The ids of B and C, known once posted (their first changes may come before post returns).
    const ids: { b?: string; c?: string } = {}
    // B: held in `running` (the provider's allocation says running too).
    const runningB = new Promise<void>((resolve) => {
      const off = orch.onUpdate((jobId, u) => {
        if (jobId === ids.b && u.state === 'running') {
          off()
          resolve()
        }
      })
    })
    ids.b = (await orch.post(spec(['hold']))).record.id
    await runningB

    // C: caught between its bids and its contract, where a crash leaves it.
    const pastBids = jobChange(
      net.requester,
      () => ids.c,
      (j) => j.state !== 'bidding',
    )
    ids.c = (await orch.post(spec(['sh', '-c', 'echo c']))).record.id
    const c = await pastBids

    const capturedAt = net.requester.clock.now()
    const nodes: Array<[string, { db: Db; peerId: string }]> = [
      ['requester', net.requester],
      ['provider-0', net.providers[0]],
      ['provider-1', net.providers[1]],
      ['contract-db', net.contractDb],
    ]
    // Every database read from the same instant (each iterator is a snapshot, all opened at once).
    const records = await Promise.all(nodes.map(([, n]) => dump(n.db)))
    const fixtures: NodeFixture[] = []
    for (const [i, [name, n]] of nodes.entries()) {
      const nodeKey = JSON.parse(await readFile(join(net.root, name, 'node.key'), 'utf8')) as unknown
      fixtures.push({ node: name, peerId: n.peerId, nodeKey, ...records[i] })
    }
    await mkdir(OUT, { recursive: true })
    for (const f of fixtures) await writeFile(join(OUT, `${f.node}.json`), JSON.stringify(f, null, 2) + '\n')
    const manifest = {
      capturedAt,
      capturedWith: 'scripts/capture-fixtures.ts',
      passphrase: 'test passphrase',
      jobs: { completed: a.record.id, running: ids.b, pastBids: ids.c },
      states: { [a.record.id]: doneA.state, [ids.b]: 'running', [ids.c]: c.state },
      nodes: Object.fromEntries(fixtures.map((f) => [f.node, f.peerId])),
    }
    await writeFile(join(OUT, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n')
    for (const f of fixtures) {
      const counts = Object.entries(f.sublevels).map(([s, r]) => `${s}=${Object.keys(r).length}`)
      process.stdout.write(`${f.node}: ${counts.join(' ')}\n`)
    }
    process.stdout.write(`job C captured in ${c.state}; written to ${OUT}\n`)
  } finally {
    await net.stop()
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(
      `capture-fixtures: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    )
    process.exit(1)
  },
)
