/**
 * The chaos run's faults (scripts/chaos.ts): a seeded schedule of SIGKILLs (a provider, the
 * requester, the contract-db, the contract-db between a lock and its reply, a second requester
 * gone for good) spread over the posting period, and the injector that runs it, starting each
 * process again with the same data dir and config. Spec: specs/chaos.md.
 */
import { ApiClient } from '../../dms/api/client.js'
import type { Devnet, DevnetProc } from '../../dms/cli/devnet.js'
import { FAULT_KILL_ENV } from '../../dms/orchestrator/fault-kill.js'
import type { ChaosOptions, FaultKind, FaultRecord } from './report.js'

/** Credited to each requester gone for good (added to what the run checks is conserved). */
export const GONE_CREDIT = 1_000_000
/** How long a fault waits for the event it needs (a lock, the gone requester's kill point). */
const FAULT_WAIT_MS = 30_000

const FINAL = new Set(['completed', 'failed', 'cancelled'])

export const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(t)
      signal?.removeEventListener('abort', done)
      resolve()
    }
    const t = setTimeout(done, ms)
    signal?.addEventListener('abort', done, { once: true })
  })

export interface ScheduledFault {
  kind: FaultKind
  /** ms after the first post */
  at: number
  target: string
  /** Which provider, among those running a job at the time of the kill (else all). */
  pick: number
  downMs: number
}

/** The fault schedule: seeded order, targets and downtimes, spread over the posting period. */
export function scheduleFaults(opts: ChaosOptions, rnd: () => number): ScheduledFault[] {
  const postingMs = opts.jobs * opts.jobEveryMs
  const kinds: FaultKind[] = []
  for (const [k, n] of Object.entries(opts.faults) as Array<[FaultKind, number]>)
    for (let i = 0; i < n; i++) kinds.push(k)
  for (let i = kinds.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1))
    ;[kinds[i], kinds[j]] = [kinds[j], kinds[i]]
  }
  const slot = (0.8 * postingMs) / Math.max(1, kinds.length)
  // Several contract-db instances are killed in turn: contract-db, contract-db-2, ...
  const instances = opts.contractDbInstances ?? 1
  let instanceKills = 0
  const nextInstance = () => {
    const k = instanceKills++ % instances
    return k === 0 ? 'contract-db' : `contract-db-${k + 1}`
  }
  const schedule = kinds.map((kind, i) => ({
    kind,
    at: Math.round(0.1 * postingMs + i * slot + rnd() * 0.3 * slot),
    target:
      kind === 'kill-contract-db-instance'
        ? nextInstance()
        : kind === 'kill-provider'
          ? 'a provider'
          : kind === 'restart-requester'
            ? 'requester'
            : kind === 'requester-gone'
              ? `requester-gone-${i}`
              : 'contract-db',
    // Which provider: drawn now, among those running a job at the time of the kill (else all).
    pick: rnd(),
    // A provider may stay down longer than the requester's liveness deadline (~6 s): then its
    // jobs are re-bid; a shorter outage is bridged by re-attaching to the running containers.
    downMs: Math.round(kind === 'kill-provider' ? 1000 + rnd() * 9000 : 500 + rnd() * 2500),
  }))
  return schedule
}

export interface FaultRun {
  /** Every fault injected so far, in order. */
  faults: FaultRecord[]
  /** Provider kills: the jobs each one hit, and the provider's peer id. */
  hitOf: Map<FaultRecord, { ids: string[]; peer: string }>
  /** Resolves once every fault ran (or one process did not come back, named in `problems`). */
  done: Promise<void>
}

/** Runs `schedule` from `t0` on: each fault kills its process, waits its downtime, restarts it. */
export function injectFaults(d: {
  devnet: Devnet
  api: () => ApiClient
  schedule: ScheduledFault[]
  t0: number
  /** The image of the gone requester's job. */
  image: string
  opts: ChaosOptions
  say: (line: string) => void
  problems: string[]
}): FaultRun {
  const { devnet, api, schedule, t0, opts, say, problems, image } = d
  const faults: FaultRecord[] = []
  const hitOf = new Map<FaultRecord, { ids: string[]; peer: string }>()
  const procOf = (name: string): DevnetProc =>
    name === 'requester'
      ? devnet.requester
      : name.startsWith('contract-db')
        ? devnet.contractDbs.find((p) => p.name === name)!
        : devnet.providers.find((p) => p.name === name)!

  const now = () => String(Date.now() - t0).padStart(6)
  /** Starts `target` again after its downtime; false when it did not come back (in `problems`). */
  const bringBack = async (target: string, rec: FaultRecord, downMs: number): Promise<boolean> => {
    await sleep(downMs, opts.signal)
    if (opts.signal?.aborted) return false
    const t = Date.now()
    try {
      await devnet.restart(target)
      rec.recoveredInMs = Date.now() - t
      say(`  ${now()} ms  ${target} back (${rec.recoveredInMs} ms to ready)`)
      return true
    } catch (err) {
      rec.error = (err as Error).message
      problems.push(`${target} did not come back after SIGKILL: ${rec.error}`)
      say(`  ${target} did NOT come back: ${rec.error}`)
      return false
    }
  }

  // The contract-db killed between a lock and its reply: armed from its first start (chaos.ts
  // passes the fault point's env), it dies at the first lock; the chain's contract-db faults wait.
  const lockKill = schedule.find((f) => f.kind === 'contract-db-lock-kill')
  const lockDone = (async () => {
    if (lockKill === undefined) return
    const rec: FaultRecord = {
      kind: lockKill.kind,
      target: 'contract-db',
      at: 0,
      downMs: lockKill.downMs,
      jobsHit: 0,
    }
    faults.push(rec)
    rec.lockHit = await exitWithin(devnet.contractDb, FAULT_WAIT_MS)
    rec.at = Date.now() - t0
    say(
      `  ${now()} ms  contract-db ${rec.lockHit ? 'SIGKILLed itself between a lock and its reply' : `saw no lock within ${FAULT_WAIT_MS} ms (SIGKILLed)`}`,
    )
    await bringBack('contract-db', rec, lockKill.downMs)
  })()

  // What needs the contract-db up (its restarts, a new requester's approval and credit) takes turns.
  let cdbTurn: Promise<unknown> = lockDone
  const withCdb = <T>(fn: () => Promise<T>): Promise<T> => {
    const r = cdbTurn.then(fn, fn)
    cdbTurn = r.catch(() => undefined)
    return r
  }

  // Requesters gone for good: each on its own, beside the others (a process of its own).
  const goneDone = Promise.all(
    schedule
      .filter((f) => f.kind === 'requester-gone')
      .map(async (f) => {
        await sleep(Math.max(0, t0 + f.at - Date.now()), opts.signal)
        if (opts.signal?.aborted) return
        const rec: FaultRecord = {
          kind: f.kind,
          target: f.target,
          at: Date.now() - t0,
          downMs: 0,
          jobsHit: 1,
        }
        faults.push(rec)
        await requesterGone(devnet, f, rec, image, say, withCdb).catch((err: unknown) => {
          rec.error = (err as Error).message
          problems.push(`${f.target}: ${rec.error}`)
        })
      }),
  )

  /** One kill-and-restart fault; false when its process did not come back. */
  const killAndRestart = async (f: ScheduledFault): Promise<boolean> => {
    if (opts.signal?.aborted) return false
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
    say(`  ${String(rec.at).padStart(6)} ms  SIGKILL ${target} (pid ${p.child.pid}, ${jobsHit} job(s) hit)`)
    const exited = new Promise((r) => p.child.once('exit', r))
    p.child.kill('SIGKILL')
    await exited
    return bringBack(target, rec, f.downMs)
  }
  // The kill-and-restart faults, one after the other.
  const chain = (async () => {
    for (const f of schedule) {
      if (f.kind === 'requester-gone' || f.kind === 'contract-db-lock-kill') continue
      await sleep(Math.max(0, t0 + f.at - Date.now()), opts.signal)
      if (f.target.startsWith('contract-db')) {
        if (!(await withCdb(() => killAndRestart(f)))) return
        continue
      }
      if (!(await killAndRestart(f))) return
    }
  })()
  const done = Promise.all([lockDone, goneDone, chain]).then(() => undefined)
  return { faults, hitOf, done }
}

/** Resolves true once `p` exits by itself within `ms`; else SIGKILLs it and resolves false. */
async function exitWithin(p: DevnetProc, ms: number): Promise<boolean> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return true
  const exited = new Promise<boolean>((r) => p.child.once('exit', () => r(true)))
  const t = setTimeout(() => p.child.kill('SIGKILL'), ms)
  const byItself = await Promise.race([exited, sleep(ms).then(() => false)])
  await exited
  clearTimeout(t)
  return byItself
}

/**
 * A second requester joins, posts one job and SIGKILLs itself once that job is stored in
 * `invoking` or `running` (DMS_FAULT_KILL_IN_STATE, drawn from the fault's pick); it is never
 * started again. Its contract must end without it: expired at startBy (never started) or claimed
 * by its provider past settleBy (a short start grace keeps both within the drain).
 */
async function requesterGone(
  devnet: Devnet,
  f: ScheduledFault,
  rec: FaultRecord,
  image: string,
  say: (line: string) => void,
  withCdb: <T>(fn: () => Promise<T>) => Promise<T>,
): Promise<void> {
  const state = f.pick < 0.5 ? 'invoking' : 'running'
  const p = await withCdb(() =>
    devnet.addRequester(f.target, GONE_CREDIT, { startGraceSeconds: 5 }, { [FAULT_KILL_ENV]: state }),
  )
  rec.gone = { peer: p.peerId }
  const api = new ApiClient(p.socket)
  for (let i = 0; i < 100; i++) {
    const { bidTopicPeers } = await api.ok<{ bidTopicPeers: number }>('GET', '/v1/info')
    if (bidTopicPeers >= devnet.providers.length) break
    await sleep(150)
  }
  say(`  ${f.target} up (${p.peerId}); posts one job, killed at ${state}, never restarted`)
  const posted = await api
    .call<{ id?: string; error?: { code?: string } }>('POST', '/v1/jobs', {
      name: f.target,
      image,
      command: ['sh', '-c', 'sleep 1; echo gone > /outputs/r'],
      resources: { cpu: 0.05, memory: '16MiB' },
      maxDuration: 5,
      maxPrice: 1_000_000,
      // The fault is where this requester dies: a provider busy with the main stream's jobs (one
      // is down at the same time) makes it wait for room rather than fail NO_BIDS before it gets
      // there (a full suite run saw it never reach invoking within FAULT_WAIT_MS).
      queueTimeout: 25,
    })
    .catch(() => undefined) // killed at `contracting`, it may die before it answers
  const jobId = posted?.body?.id
  say(
    `  ${f.target} posted its job: ${posted === undefined ? 'no answer' : `${posted.status} ${jobId ?? JSON.stringify(posted.body)}`}`,
  )
  // Where its job stood when it was not killed in time says why (no bids, no funds, ...).
  let lastSeen = ''
  const watch = (async () => {
    while (jobId !== undefined && p.child.exitCode === null && p.child.signalCode === null) {
      const v = await api
        .call<{ state?: string; error?: { code?: string; message?: string } }>('GET', `/v1/jobs/${jobId}`)
        .catch(() => undefined)
      if (v?.body?.state !== undefined)
        lastSeen = `${v.body.state}${v.body.error ? ` ${v.body.error.code ?? ''} ${v.body.error.message ?? ''}` : ''}`
      await sleep(500)
    }
  })()
  const byItself = await exitWithin(p, FAULT_WAIT_MS)
  await watch
  rec.gone.killedIn = byItself
    ? state
    : `none (not ${state} within ${FAULT_WAIT_MS} ms: killed; its job was last seen ${lastSeen || 'nowhere'})`
}
