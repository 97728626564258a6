/**
 * Chaos: a devnet of real processes (`startDevnet`: a contract-db, providers and a requester, the
 * Docker executor, image dms-test:1) runs a steady stream of real jobs posted over the requester's
 * REST socket, while a seeded schedule SIGKILLs providers, the requester and the contract-db and
 * starts each again with the same data dir and config. After a bounded drain it reports jobs
 * posted, completed, failed (by error code), cancelled and LOST (must be 0), and checks escrow
 * conservation at the contract-db (must hold). Spec: specs/chaos.md.
 *
 *   npm run chaos                  # the full run (4 providers, 120 s of jobs)
 *   npm run chaos -- --short       # the CI version (2 providers, 8 jobs, 3 faults)
 *   npm run chaos -- --seed 42     # replay a schedule (the seed is printed)
 *
 * Exits 1 if a job was lost, escrow was not conserved or a process did not come back.
 */
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { ApiClient, DaemonNotRunningError } from '../dms/api/client.js'
import { startDevnet, type Devnet, type DevnetProc } from '../dms/cli/devnet.js'
import type { ContractSummary } from '../dms/contract-db/operator-api.js'
import type { Account } from '../dms/contract-db/records.js'

const ROOT = join(import.meta.dirname, '..')
const IMAGE = process.env.DMS_TEST_IMAGE ?? 'dms-test:1'
const FINAL = new Set(['completed', 'failed', 'cancelled'])
const CREDIT = 100_000_000

export type FaultKind = 'kill-provider' | 'restart-requester' | 'restart-contract-db'

export interface ChaosOptions {
  seed: number
  providers: number
  /** Jobs to post, one every `jobEveryMs`. */
  jobs: number
  jobEveryMs: number
  /** Faults, spread over the posting period in a seeded order. */
  faults: Partial<Record<FaultKind, number>>
  /** Bound on the wait for every posted job to reach a final state. */
  drainMs: number
  /** Progress lines. @default none */
  say?: (line: string) => void
  /** Where to write the JSON report. @default none */
  resultsDir?: string
  /** Set once to stop early (SIGINT): the run drains nothing and stops every process. */
  signal?: AbortSignal
}

export interface FaultRecord {
  kind: FaultKind
  target: string
  /** ms since the first post */
  at: number
  downMs: number
  /** Jobs not yet final at the kill; for a provider, jobs it had in `invoking` or `running`. */
  jobsHit: number
  /** Provider kills: of the jobs hit, how many it finished after its restart (re-attached to the
   * container) and how many the requester re-bid (dropped it for a fault). */
  finishedByTarget?: number
  rebid?: number
  /** ms from the restart to its ready line, or the reason it did not come back. */
  recoveredInMs?: number
  error?: string
}

export interface ChaosReport {
  seed: number
  options: Omit<ChaosOptions, 'say' | 'signal' | 'resultsDir'>
  durationMs: number
  faults: FaultRecord[]
  jobs: {
    posted: number
    /** Posts the requester did not take (an error answer, or down for 30 s): not jobs, not lost. */
    notTaken: Array<{ name: string; why: string }>
    /** Posts answered `DAEMON_NOT_RUNNING` (requester down) and sent again. */
    postRetries: number
    completed: number
    failed: number
    failedBy: Record<string, number>
    /** Each failed job's error, for the reader. */
    failures: Array<{ id: string; code: string; message: string }>
    cancelled: number
    /** Jobs that dropped a provider for a fault (`attempts`) and were re-bid. */
    rebid: number
    /** Jobs posted with a queueTimeout (every other one), and those that waited in `queued`. */
    withQueueTimeout: number
    queued: number
    /** Posted (or possibly posted) but unknown to the requester, or not final within the drain. */
    lost: number
    lostIds: string[]
    /** ms from post to final state, completed jobs */
    latencyMs: { p50: number; p90: number; max: number }
  }
  escrow: {
    credited: number
    balances: number
    inEscrow: number
    conserved: boolean
    contracts: number
    byState: Record<string, number>
    /** Closed contracts whose paid + refunded differs from their escrow. */
    badSplits: string[]
    /** Contract ids that more than one of the requester's settlements name. */
    settledTwice: string[]
    /** Sum paid by closed contracts vs the providers' balances (equal unless paid twice). */
    paidToProviders: number
    providerBalances: number
    /** Contracts still active once every job is final (escrow held for no job). */
    openAfterDrain: string[]
    /** Requester settlements that differ from the contract-db's record of the contract. */
    mismatches: string[]
  }
  /** No job lost, escrow conserved, every process back: the verdict. */
  ok: boolean
  problems: string[]
  /** Findings that do not fail the run (e.g. escrow still locked in active contracts). */
  warnings: string[]
}

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
  faults: { 'kill-provider': 1, 'restart-requester': 1, 'restart-contract-db': 1 },
  drainMs: 45_000,
}

export const FULL: Omit<ChaosOptions, 'seed'> = {
  providers: 4,
  jobs: 60,
  jobEveryMs: 2000,
  faults: { 'kill-provider': 4, 'restart-requester': 2, 'restart-contract-db': 2 },
  drainMs: 120_000,
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(t)
      signal?.removeEventListener('abort', done)
      resolve()
    }
    const t = setTimeout(done, ms)
    signal?.addEventListener('abort', done, { once: true })
  })

const percentile = (xs: number[], p: number) => {
  if (xs.length === 0) return 0
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]
}

interface JobView {
  id: string
  state: string
  createdAt: number
  history: Array<{ state: string; at: number }>
  error?: { code: string; message: string }
  settlement?: { contractId: string; paidToProvider: number; refundedToRequester: number }
  attempts?: Array<{
    provider: string
    contractId?: string
    settlement?: { contractId: string; paidToProvider: number }
  }>
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
    net = await startDevnet({ providers: opts.providers, dir, keep: true, credit: CREDIT })
    const devnet = net
    const api = () => new ApiClient(devnet.requester.socket)

    // The fault schedule: seeded order, targets and downtimes, spread over the posting period.
    const postingMs = opts.jobs * opts.jobEveryMs
    const kinds: FaultKind[] = []
    for (const [k, n] of Object.entries(opts.faults) as Array<[FaultKind, number]>)
      for (let i = 0; i < n; i++) kinds.push(k)
    for (let i = kinds.length - 1; i > 0; i--) {
      const j = Math.floor(rnd() * (i + 1))
      ;[kinds[i], kinds[j]] = [kinds[j], kinds[i]]
    }
    const slot = (0.8 * postingMs) / Math.max(1, kinds.length)
    const schedule = kinds.map((kind, i) => ({
      kind,
      at: Math.round(0.1 * postingMs + i * slot + rnd() * 0.3 * slot),
      target:
        kind === 'kill-provider' ? 'a provider' : kind === 'restart-requester' ? 'requester' : 'contract-db',
      // Which provider: drawn now, among those running a job at the time of the kill (else all).
      pick: rnd(),
      // A provider may stay down longer than the requester's liveness deadline (~6 s): then its
      // jobs are re-bid; a shorter outage is bridged by re-attaching to the running containers.
      downMs: Math.round(kind === 'kill-provider' ? 1000 + rnd() * 9000 : 500 + rnd() * 2500),
    }))
    for (const f of schedule) say(`  scheduled at ${f.at} ms: ${f.kind} ${f.target}, down ${f.downMs} ms`)

    const t0 = Date.now()
    const procOf = (name: string): DevnetProc =>
      name === 'requester'
        ? devnet.requester
        : name === 'contract-db'
          ? devnet.contractDb
          : devnet.providers.find((p) => p.name === name)!

    // The faults, one after the other.
    const faults: FaultRecord[] = []
    // Provider kills: the jobs each one hit, and the provider's peer id.
    const hitOf = new Map<FaultRecord, { ids: string[]; peer: string }>()
    const injector = (async () => {
      for (const f of schedule) {
        await sleep(Math.max(0, t0 + f.at - Date.now()), opts.signal)
        if (opts.signal?.aborted) return
        const jobs = await api()
          .ok<{ jobs: Array<{ id: string; state: string; provider?: string }> }>('GET', '/v1/jobs')
          .then((r) => r.jobs.filter((j) => !FINAL.has(j.state)))
          .catch(() => [])
        let target = f.target
        let jobsHit = jobs.length
        let hitIds: string[] = []
        let hitPeer = ''
        if (f.kind === 'kill-provider') {
          const busy = devnet.providers.filter((q) =>
            jobs.some((j) => j.provider === q.peerId && ['invoking', 'running'].includes(j.state)),
          )
          const among = busy.length > 0 ? busy : devnet.providers
          const chosen = among[Math.floor(f.pick * among.length)]
          target = chosen.name
          hitIds = jobs
            .filter((j) => j.provider === chosen.peerId && ['invoking', 'running'].includes(j.state))
            .map((j) => j.id)
          jobsHit = hitIds.length
          hitPeer = chosen.peerId
        }
        const p = procOf(target)
        const rec: FaultRecord = { kind: f.kind, target, at: Date.now() - t0, downMs: f.downMs, jobsHit }
        faults.push(rec)
        if (f.kind === 'kill-provider') hitOf.set(rec, { ids: hitIds, peer: hitPeer })
        say(
          `  ${String(rec.at).padStart(6)} ms  SIGKILL ${target} (pid ${p.child.pid}, ${jobsHit} job(s) hit)`,
        )
        const exited = new Promise((r) => p.child.once('exit', r))
        p.child.kill('SIGKILL')
        await exited
        await sleep(f.downMs, opts.signal)
        if (opts.signal?.aborted) return
        const t = Date.now()
        try {
          await devnet.restart(target)
          rec.recoveredInMs = Date.now() - t
          say(
            `  ${String(Date.now() - t0).padStart(6)} ms  ${target} back (${rec.recoveredInMs} ms to ready)`,
          )
        } catch (err) {
          rec.error = (err as Error).message
          problems.push(`${target} did not come back after SIGKILL: ${rec.error}`)
          say(`  ${target} did NOT come back: ${rec.error}`)
          return
        }
      }
    })()

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
    const cdb = new ApiClient(devnet.contractDb.socket)
    const { accounts } = await cdb.ok<{ accounts: Account[] }>('GET', '/v1/contract-db/accounts')
    const { contracts } = await cdb.ok<{ contracts: ContractSummary[] }>('GET', '/v1/contract-db/contracts')
    const balances = accounts.reduce((s, a) => s + a.balance, 0)
    const inEscrow = accounts.reduce((s, a) => s + a.escrow, 0)
    const byState: Record<string, number> = {}
    for (const c of contracts) byState[c.state] = (byState[c.state] ?? 0) + 1
    const closed = contracts.filter((c) => c.paidToProvider !== undefined)
    const badSplits = closed
      .filter((c) => (c.paidToProvider ?? 0) + (c.refundedToRequester ?? 0) !== c.escrow)
      .map((c) => c.contractId)
    const paidToProviders = closed.reduce((s, c) => s + (c.paidToProvider ?? 0), 0)
    const providerIds = new Set(devnet.providers.map((p) => p.peerId))
    const providerBalances = accounts
      .filter((a) => providerIds.has(a.peer))
      .reduce((s, a) => s + a.balance, 0)
    const activeEscrow = contracts
      .filter((c) => c.paidToProvider === undefined)
      .reduce((s, c) => s + c.escrow, 0)
    const byId = new Map(contracts.map((c) => [c.contractId, c]))
    const seen = new Map<string, number>()
    const mismatches: string[] = []
    for (const v of views) {
      const settlements = [
        ...(v.attempts ?? []).flatMap((a) => (a.settlement ? [a.settlement] : [])),
        ...(v.settlement ? [v.settlement] : []),
      ]
      for (const s of settlements) {
        seen.set(s.contractId, (seen.get(s.contractId) ?? 0) + 1)
        const c = byId.get(s.contractId)
        if (c?.paidToProvider !== s.paidToProvider)
          mismatches.push(
            `${s.contractId}: requester says paid ${s.paidToProvider}, contract-db ${c?.paidToProvider}`,
          )
      }
    }
    const settledTwice = [...seen].filter(([, n]) => n > 1).map(([id]) => id)
    const openAfterDrain = contracts.filter((c) => c.state === 'active').map((c) => c.contractId)
    const conserved =
      balances + inEscrow === CREDIT &&
      activeEscrow === inEscrow &&
      paidToProviders === providerBalances &&
      badSplits.length === 0 &&
      settledTwice.length === 0

    if (opts.signal?.aborted)
      problems.push('interrupted (SIGINT): no drain, so jobs still running are counted as lost')
    if (lostIds.length > 0) problems.push(`${lostIds.length} job(s) lost: ${lostIds.join(', ')}`)
    if (!conserved)
      problems.push(
        `escrow not conserved: credited ${CREDIT}, balances ${balances} + escrow ${inEscrow}; ` +
          `active contracts hold ${activeEscrow}; paid ${paidToProviders} vs provider balances ${providerBalances}; ` +
          `bad splits ${badSplits.length}, settled twice ${settledTwice.length}`,
      )
    if (mismatches.length > 0) problems.push(`settlement mismatches: ${mismatches.join('; ')}`)
    const warnings: string[] = []
    if (openAfterDrain.length > 0)
      warnings.push(
        `${openAfterDrain.length} contract(s) still active with escrow locked after every job ended: ${openAfterDrain.join(', ')}`,
      )

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
      escrow: {
        credited: CREDIT,
        balances,
        inEscrow,
        conserved,
        contracts: contracts.length,
        byState,
        badSplits,
        settledTwice,
        paidToProviders,
        providerBalances,
        openAfterDrain,
        mismatches,
      },
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

/** The report as a table. */
export function table(r: ChaosReport): string {
  const row = (k: string, v: string | number) => `  ${k.padEnd(34)} ${v}`
  const lines = [
    `chaos seed ${r.seed}: ${r.options.providers} providers, ${r.options.jobs} jobs every ${r.options.jobEveryMs} ms, ${(r.durationMs / 1000).toFixed(1)} s`,
    '',
    '  faults',
    ...r.faults.map((f) =>
      row(
        `    ${f.at} ms ${f.kind} ${f.target}`,
        f.error
          ? `DID NOT RECOVER: ${f.error}`
          : `${f.jobsHit} job(s) hit, down ${f.downMs} ms, ready in ${f.recoveredInMs} ms` +
              (f.rebid !== undefined ? `; ${f.finishedByTarget} re-attached, ${f.rebid} re-bid` : ''),
      ),
    ),
    '  jobs',
    row('    posted', r.jobs.posted),
    row('    posts not taken', r.jobs.notTaken.length),
    row('    posts retried (requester down)', r.jobs.postRetries),
    row('    completed', r.jobs.completed),
    row('    failed', r.jobs.failed),
    ...Object.entries(r.jobs.failedBy).map(([code, n]) => row(`      ${code}`, n)),
    row('    cancelled', r.jobs.cancelled),
    row('    re-bid after a provider fault', r.jobs.rebid),
    row('    posted with a queueTimeout', r.jobs.withQueueTimeout),
    row('    waited in queued', r.jobs.queued),
    row('    LOST', r.jobs.lost),
    row(
      '    completed latency p50/p90/max',
      `${r.jobs.latencyMs.p50}/${r.jobs.latencyMs.p90}/${r.jobs.latencyMs.max} ms`,
    ),
    '  escrow (micro-tokens, contract-db)',
    row('    credited', r.escrow.credited),
    row(
      '    balances + escrow',
      `${r.escrow.balances} + ${r.escrow.inEscrow} = ${r.escrow.balances + r.escrow.inEscrow}`,
    ),
    row(
      '    paid by contracts / provider bal.',
      `${r.escrow.paidToProviders} / ${r.escrow.providerBalances}`,
    ),
    row('    contracts', `${r.escrow.contracts} ${JSON.stringify(r.escrow.byState)}`),
    row('    settled twice', r.escrow.settledTwice.length),
    row('    active after drain', r.escrow.openAfterDrain.length),
    row('    conserved', r.escrow.conserved ? 'yes' : 'NO'),
    '',
    ...r.warnings.map((w) => `warning: ${w}`),
    r.ok ? 'OK: no job lost, escrow conserved' : `FAILED:\n${r.problems.map((p) => `  - ${p}`).join('\n')}`,
  ]
  return lines.join('\n')
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
