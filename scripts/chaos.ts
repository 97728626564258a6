/**
 * Chaos: a devnet of real processes (`startDevnet`: a contract-db, providers and a requester, the
 * Docker executor, image dms-test:1) runs a steady stream of real jobs posted over the requester's
 * REST socket, while a seeded schedule SIGKILLs providers, the requester and the contract-db and
 * starts each again with the same data dir and config; the contract-db is also killed between a
 * lock and its reply, and a second requester goes for good. After a bounded drain it reports jobs
 * posted, completed, failed (by error code), cancelled and LOST (must be 0), and checks escrow
 * conservation at the contract-db (must hold) and that no contract is left active. Spec:
 * specs/chaos.md.
 *
 *   npm run chaos                  # the full run (4 providers, 120 s of jobs)
 *   npm run chaos -- --short       # the CI version (2 providers, 8 jobs, 5 faults)
 *   npm run chaos -- --seed 42     # replay a schedule (the seed is printed)
 *
 * Exits 1 if a job was lost, escrow was not conserved, a contract was left active after the drain
 * or a process did not come back.
 */
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { ApiClient, DaemonNotRunningError } from '../dms/api/client.js'
import { startDevnet, type Devnet } from '../dms/cli/devnet.js'
import { FAULT_CDB_KILL_ENV } from '../dms/contract-db/fault-kill.js'
import { activeAfterDrain, checkEscrow, contractsAt, type JobView } from './chaos/checks.js'
import { GONE_CREDIT, injectFaults, scheduleFaults, sleep } from './chaos/faults.js'
import { percentile, table, type ChaosOptions, type ChaosReport } from './chaos/report.js'

export * from './chaos/report.js'

const ROOT = join(import.meta.dirname, '..')
const IMAGE = process.env.DMS_TEST_IMAGE ?? 'dms-test:1'
const FINAL = new Set(['completed', 'failed', 'cancelled'])
const CREDIT = 100_000_000

/** mulberry32: a small seeded PRNG, so a schedule can be replayed from its seed. */
export function prng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

export const SHORT: Omit<ChaosOptions, 'seed'> = {
  providers: 2,
  jobs: 8,
  jobEveryMs: 1500,
  faults: {
    'kill-provider': 1,
    'restart-requester': 1,
    'restart-contract-db': 1,
    'contract-db-lock-kill': 1,
    'requester-gone': 1,
  },
  drainMs: 45_000,
}

/**
 * Two contract-db instances on one PostgreSQL database (the caller gives `contractDbStore`),
 * SIGKILLed in turn (the first twice, the second once) and restarted under the job stream
 * (specs/chaos.md, "Several contract-db instances").
 */
export const SHORT_INSTANCES: Omit<ChaosOptions, 'seed' | 'contractDbStore'> = {
  providers: 2,
  jobs: 8,
  jobEveryMs: 1500,
  faults: { 'kill-contract-db-instance': 3 },
  drainMs: 45_000,
  contractDbInstances: 2,
}

export const FULL: Omit<ChaosOptions, 'seed'> = {
  providers: 4,
  jobs: 60,
  jobEveryMs: 2000,
  faults: {
    'kill-provider': 4,
    'restart-requester': 2,
    'restart-contract-db': 2,
    'contract-db-lock-kill': 1,
    'requester-gone': 2,
  },
  drainMs: 120_000,
}

interface Posted {
  name: string
  id?: string
  postedAt: number
  /** The POST's answer never came (the requester died mid-request): found by name at the end. */
  unsure?: string
}

/** Runs one chaos session and returns its report; always stops every process it started. */
export async function runChaos(opts: ChaosOptions): Promise<ChaosReport> {
  const say = opts.say ?? (() => undefined)
  const rnd = prng(opts.seed)
  const started = Date.now()
  const dir = await mkdtemp(join(tmpdir(), 'dms-chaos-'))
  say(`chaos: seed ${opts.seed}, ${opts.providers} providers, ${opts.jobs} jobs, data and logs in ${dir}`)
  let net: Devnet | undefined
  const problems: string[] = []
  try {
    // Short deadlines, so that contracts of a requester gone for good end within the drain
    // (expired at startBy, or claimed by their provider past settleBy).
    net = await startDevnet({
      providers: opts.providers,
      dir,
      keep: true,
      credit: CREDIT,
      contractDb: { settleGraceMs: 2000, claimWindowMs: 5000, expirySweepMs: 1000 },
      // The contract-db killed between a lock and its reply: armed at its first start only.
      ...((opts.faults['contract-db-lock-kill'] ?? 0) > 0
        ? { contractDbEnv: { [FAULT_CDB_KILL_ENV]: '1' } }
        : {}),
      claimSweepMs: 1000,
      ...(opts.contractDbStore !== undefined ? { contractDbStore: opts.contractDbStore } : {}),
      ...(opts.contractDbInstances !== undefined ? { contractDbInstances: opts.contractDbInstances } : {}),
    })
    const devnet = net
    const api = () => new ApiClient(devnet.requester.socket)

    const schedule = scheduleFaults(opts, rnd)
    for (const f of schedule) say(`  scheduled at ${f.at} ms: ${f.kind} ${f.target}, down ${f.downMs} ms`)
    const t0 = Date.now()
    // The faults, one after the other.
    const {
      faults,
      hitOf,
      done: injector,
    } = injectFaults({
      devnet,
      api,
      schedule,
      t0,
      opts,
      say,
      problems,
      image: IMAGE,
    })

    // The job stream: one post every jobEveryMs; a post refused while the requester is down is
    // sent again until it is taken (bounded).
    const posted: Posted[] = []
    let postRetries = 0
    const post = async (i: number) => {
      const name = `chaos-${opts.seed}-${i}`
      const secs = 1 + Math.floor(rnd() * 3)
      const spec = {
        name,
        image: IMAGE,
        command: ['sh', '-c', `sleep ${secs}; echo ok > /outputs/r`],
        // Small, so that losing bids' reservations (held bidTtlMs, 30 s) leave room for the stream.
        resources: { cpu: 0.05, memory: '16MiB' },
        maxDuration: 60,
        maxPrice: 1_000_000,
        // Every other job may wait in `queued` when no provider has room (specs/queueing.md).
        ...(i % 2 === 1 ? { queueTimeout: 30 } : {}),
      }
      const p: Posted = { name, postedAt: Date.now() }
      posted.push(p)
      for (let attempt = 0; ; attempt++) {
        try {
          const res = await api().call<{ id?: string; error?: { code: string; message: string } }>(
            'POST',
            '/v1/jobs',
            spec,
          )
          if (res.status === 201 && res.body.id) p.id = res.body.id
          else p.unsure = `POST answered ${res.status} ${JSON.stringify(res.body)}`
          return
        } catch (err) {
          if (err instanceof DaemonNotRunningError && attempt < 120 && !opts.signal?.aborted) {
            postRetries++
            await sleep(250, opts.signal)
            continue
          }
          p.unsure = (err as Error).message
          return
        }
      }
    }
    const posts: Promise<void>[] = []
    for (let i = 0; i < opts.jobs && !opts.signal?.aborted; i++) {
      await sleep(Math.max(0, t0 + i * opts.jobEveryMs - Date.now()), opts.signal)
      posts.push(post(i))
    }
    await Promise.all(posts)
    await injector
    say(`  ${String(Date.now() - t0).padStart(6)} ms  posting and faults done; draining`)

    // Drain: every posted job to a final state, bounded. Unsure posts are looked up by name.
    const drainUntil = Date.now() + opts.drainMs
    let list: Array<{ id: string; name?: string; state: string }> = []
    for (;;) {
      try {
        list = (await api().ok<{ jobs: typeof list }>('GET', '/v1/jobs')).jobs
      } catch (err) {
        problems.push(`GET /v1/jobs failed during the drain: ${(err as Error).message}`)
        break
      }
      for (const p of posted) if (p.id === undefined) p.id = list.find((j) => j.name === p.name)?.id ?? p.id
      const ids = new Set(posted.map((p) => p.id))
      const open = list.filter((j) => ids.has(j.id) && !FINAL.has(j.state))
      if (open.length === 0 || Date.now() > drainUntil || opts.signal?.aborted) break
      await sleep(1000, opts.signal)
    }
    // Then until no contract is active (a requester gone for good leaves its contracts to expiry
    // and to its providers' claims), within the same bound.
    while (Date.now() <= drainUntil && !opts.signal?.aborted) {
      const active = await contractsAt(devnet.contractDb.socket)
        .then(activeAfterDrain)
        .catch(() => ['?'])
      if (active.length === 0) break
      await sleep(1000, opts.signal)
    }

    // The jobs, one by one.
    const views: JobView[] = []
    const lostIds: string[] = []
    for (const p of posted) {
      if (p.id === undefined) {
        // Never taken: the POST failed before the job was stored, and the requester does not know it.
        if (p.unsure !== undefined && !/ECONNRESET|socket hang up/.test(p.unsure)) continue
        lostIds.push(p.name)
        continue
      }
      const res = await api().call<JobView>('GET', `/v1/jobs/${p.id}`)
      if (res.status !== 200 || !FINAL.has(res.body.state)) lostIds.push(p.id)
      if (res.status === 200) views.push(res.body)
    }
    const final = views.filter((v) => FINAL.has(v.state))
    for (const [rec, { ids, peer }] of hitOf) {
      const hitViews = views.filter((v) => ids.includes(v.id))
      rec.rebid = hitViews.filter((v) => (v.attempts ?? []).some((a) => a.provider === peer)).length
      rec.finishedByTarget = hitViews.filter(
        (v) => v.state === 'completed' && !(v.attempts ?? []).some((a) => a.provider === peer),
      ).length
    }
    const failedBy: Record<string, number> = {}
    for (const v of final.filter((j) => j.state === 'failed')) {
      const code = v.error?.code ?? 'UNKNOWN'
      failedBy[code] = (failedBy[code] ?? 0) + 1
    }
    const doneAt = (v: JobView) => v.history.at(-1)?.at ?? v.createdAt
    const lat = final.filter((v) => v.state === 'completed').map((v) => doneAt(v) - v.createdAt)

    // Escrow at the contract-db: what was credited is in balances or escrow, nothing more or less.
    const { activeEscrow, ...escrow } = await checkEscrow(
      devnet.contractDb.socket,
      new Set(devnet.providers.map((p) => p.peerId)),
      views,
      CREDIT + GONE_CREDIT * faults.filter((f) => f.gone !== undefined).length,
    )
    // How the contracts of each requester gone for good ended.
    const contracts = await contractsAt(devnet.contractDb.socket)
    for (const f of faults)
      if (f.gone !== undefined)
        f.gone.contracts = contracts
          .filter((c) => c.requester === f.gone?.peer)
          .map((c) => ({ state: c.state, ...(c.reason !== undefined ? { reason: c.reason } : {}) }))
    const { balances, inEscrow, conserved, paidToProviders, providerBalances } = escrow
    const { badSplits, settledTwice, mismatches, openAfterDrain } = escrow
    if (opts.signal?.aborted)
      problems.push('interrupted (SIGINT): no drain, so jobs still running are counted as lost')
    if (lostIds.length > 0) problems.push(`${lostIds.length} job(s) lost: ${lostIds.join(', ')}`)
    if (!conserved)
      problems.push(
        `escrow not conserved: credited ${escrow.credited}, balances ${balances} + escrow ${inEscrow}; ` +
          `active contracts hold ${activeEscrow}; paid ${paidToProviders} vs provider balances ${providerBalances}; ` +
          `bad splits ${badSplits.length}, settled twice ${settledTwice.length}`,
      )
    if (mismatches.length > 0) problems.push(`settlement mismatches: ${mismatches.join('; ')}`)
    // A gone requester that never reached its fault point did not test what the fault is about.
    for (const f of faults)
      if (f.gone?.killedIn !== undefined && !['invoking', 'running'].includes(f.gone.killedIn))
        problems.push(`${f.target} was killed in ${f.gone.killedIn}`)
    if (openAfterDrain.length > 0)
      problems.push(
        `${openAfterDrain.length} contract(s) still active with escrow locked after the drain: ${openAfterDrain.join(', ')}`,
      )
    const warnings: string[] = []

    const report: ChaosReport = {
      seed: opts.seed,
      options: {
        seed: opts.seed,
        providers: opts.providers,
        jobs: opts.jobs,
        jobEveryMs: opts.jobEveryMs,
        faults: opts.faults,
        drainMs: opts.drainMs,
      },
      durationMs: Date.now() - started,
      faults,
      jobs: {
        posted: posted.filter((p) => p.id !== undefined).length,
        notTaken: posted
          .filter((p) => p.id === undefined && !lostIds.includes(p.name))
          .map((p) => ({ name: p.name, why: p.unsure ?? '' })),
        postRetries,
        completed: final.filter((v) => v.state === 'completed').length,
        failed: final.filter((v) => v.state === 'failed').length,
        failedBy,
        failures: final
          .filter((v) => v.state === 'failed')
          .map((v) => ({ id: v.id, code: v.error?.code ?? 'UNKNOWN', message: v.error?.message ?? '' })),
        cancelled: final.filter((v) => v.state === 'cancelled').length,
        rebid: views.filter((v) => (v.attempts?.length ?? 0) > 0).length,
        withQueueTimeout: Math.floor(posted.length / 2),
        queued: views.filter((v) => v.history.some((h) => h.state === 'queued')).length,
        lost: lostIds.length,
        lostIds,
        latencyMs: { p50: percentile(lat, 50), p90: percentile(lat, 90), max: percentile(lat, 100) },
      },
      escrow,
      ok: problems.length === 0,
      problems,
      warnings,
    }
    if (opts.resultsDir !== undefined) {
      await mkdir(opts.resultsDir, { recursive: true })
      const file = join(opts.resultsDir, `chaos-${new Date().toISOString().replace(/[:.]/g, '-')}.json`)
      await writeFile(file, `${JSON.stringify(report, null, 2)}\n`)
      say(`report written to ${file}`)
    }
    return report
  } finally {
    if (net !== undefined) {
      const exits = await net.stop()
      say(
        `stopped: ${Object.entries(exits)
          .map(([n, c]) => `${n} ${c}`)
          .join(', ')}`,
      )
    }
    // Logs are kept when something went wrong, for the report's reader.
    if (problems.length === 0) await rm(dir, { recursive: true, force: true })
    else say(`data and logs kept in ${dir}`)
  }
}

async function main(): Promise<void> {
  const args = process.argv.slice(2)
  const seedAt = args.indexOf('--seed')
  const seed = seedAt >= 0 ? Number(args[seedAt + 1]) : Math.floor(Math.random() * 2 ** 31)
  if (!Number.isInteger(seed)) throw new Error('--seed takes a whole number')
  if (!existsSync(join(ROOT, 'dist/dms/cli/main.js')))
    throw new Error('the CLI is not built (the devnet runs bin/dms.js): run `npm run build` first')
  const ac = new AbortController()
  process.once('SIGINT', () => {
    console.log('\ninterrupted: stopping every process…')
    ac.abort()
    process.once('SIGINT', () => process.exit(130))
  })
  const report = await runChaos({
    ...(args.includes('--short') ? SHORT : FULL),
    seed,
    say: (l) => console.log(l),
    resultsDir: join(ROOT, 'bench/results'),
    signal: ac.signal,
  })
  console.log(`\n${table(report)}`)
  process.exitCode = ac.signal.aborted ? 130 : report.ok ? 0 : 1
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href)
  await main().catch((err: unknown) => {
    console.error(`chaos: ${(err as Error).message}`)
    process.exitCode = 1
  })
