/**
 * The chaos run's faults (scripts/chaos.ts): a seeded schedule of SIGKILLs (a provider, the
 * requester, the contract-db) spread over the posting period, and the injector that runs it,
 * starting each process again with the same data dir and config. Spec: specs/chaos.md.
 */
import type { ApiClient } from '../../dms/api/client.js'
import type { Devnet, DevnetProc } from '../../dms/cli/devnet.js'
import type { ChaosOptions, FaultKind, FaultRecord } from './report.js'

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
  opts: ChaosOptions
  say: (line: string) => void
  problems: string[]
}): FaultRun {
  const { devnet, api, schedule, t0, opts, say, problems } = d
  const faults: FaultRecord[] = []
  const hitOf = new Map<FaultRecord, { ids: string[]; peer: string }>()
  const procOf = (name: string): DevnetProc =>
    name === 'requester'
      ? devnet.requester
      : name === 'contract-db'
        ? devnet.contractDb
        : devnet.providers.find((p) => p.name === name)!

  const done = (async () => {
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
      say(`  ${String(rec.at).padStart(6)} ms  SIGKILL ${target} (pid ${p.child.pid}, ${jobsHit} job(s) hit)`)
      const exited = new Promise((r) => p.child.once('exit', r))
      p.child.kill('SIGKILL')
      await exited
      await sleep(f.downMs, opts.signal)
      if (opts.signal?.aborted) return
      const t = Date.now()
      try {
        await devnet.restart(target)
        rec.recoveredInMs = Date.now() - t
        say(`  ${String(Date.now() - t0).padStart(6)} ms  ${target} back (${rec.recoveredInMs} ms to ready)`)
      } catch (err) {
        rec.error = (err as Error).message
        problems.push(`${target} did not come back after SIGKILL: ${rec.error}`)
        say(`  ${target} did NOT come back: ${rec.error}`)
        return
      }
    }
  })()
  return { faults, hitOf, done }
}
