/**
 * The engine router (specs/executor.md, "Engines"): the provider's one runner over the engines it
 * offers, in `provider.engines` order. Each workload goes to the first engine whose capabilities
 * fit what it needs (`engineFits`: its artifact kind, GPUs, network), preferring one that answers:
 * the same rule the provider chose the engine its bid names with, so the run lands where the bid
 * said. Runs, re-attach and clean-up reach every engine. Nothing here knows an engine by name.
 */
import type { Logger } from 'pino'
import { engineFits, engineNeedOf, type EngineNeed } from '../workload/capabilities.js'
import type { Workload } from '../workload/workload.js'
import type { ArtifactRef, Engine, EngineRun, Runner } from './engine.js'
import { DmsError } from '../../actors/errors.js'
import type { AllocationId, ExecutionResult, ExecutionSpec, RunOptions } from './executor.js'

/** No engine offered here runs the workload (a provider bids only on what one runs, so rare). */
export class NoEngineError extends DmsError {
  readonly peerMessage = 'no engine for this job on this provider'
  constructor(readonly need: EngineNeed) {
    super(
      'NO_ENGINE',
      `no engine offered here runs a ${need.artifactKind}${need.gpus > 0 ? ' with GPUs' : ''}${need.network ? ' with a network' : ''}: add one to provider.engines`,
    )
  }
}

export interface EngineRouterComponents {
  /** The engines offered, in the order a workload is matched against them. */
  engines: readonly Engine[]
  log: Logger
}

export class EngineRouter implements Runner {
  /** Which engine listed each allocation last: where its re-attach and removal go. */
  private readonly owners = new Map<AllocationId, Engine>()

  constructor(private readonly c: EngineRouterComponents) {
    if (c.engines.length === 0) throw new Error('EngineRouter needs at least one engine')
  }

  /** The engine that runs `w`: the first that fits and answers, else the first that fits. */
  async engineFor(w: Workload): Promise<Engine> {
    const need = engineNeedOf(w)
    const caps = await Promise.all(this.c.engines.map(async (e) => ({ e, can: await e.capabilities() })))
    const fitting = caps.filter(({ can }) => engineFits(can, need))
    const chosen = fitting.find(({ can }) => can.available) ?? fitting[0]
    if (chosen === undefined) throw new NoEngineError(need)
    this.c.log.debug({ engine: chosen.can.name, available: chosen.can.available }, 'engine chosen')
    return chosen.e
  }

  /** Present on (or fetched by) any engine. Rejects only when no engine said yes and one rejected. */
  async hasArtifact(artifact: ArtifactRef): Promise<boolean> {
    const answers = await Promise.allSettled(this.c.engines.map((e) => e.hasArtifact(artifact)))
    if (answers.some((a) => a.status === 'fulfilled' && a.value)) return true
    const failed = answers.find((a) => a.status === 'rejected')
    if (failed !== undefined) throw failed.reason
    return false
  }

  async run(spec: ExecutionSpec, options?: RunOptions): Promise<ExecutionResult> {
    const engine = await this.engineFor(spec.workload)
    this.owners.set(spec.allocationId, engine)
    try {
      return await engine.run(spec, options)
    } finally {
      this.owners.delete(spec.allocationId)
    }
  }

  /**
   * Every engine's runs. Rejects when one engine does not answer: a run of it may be among them,
   * and the caller (re-attach after a restart) must not take "not listed" for "never started".
   */
  async listRuns(): Promise<EngineRun[]> {
    const lists = await Promise.all(this.c.engines.map(async (e) => ({ e, runs: await e.listRuns() })))
    for (const { e, runs } of lists) for (const r of runs) this.owners.set(r.allocationId, e)
    return lists.flatMap((l) => l.runs)
  }

  async reattach(spec: ExecutionSpec, options?: RunOptions): Promise<ExecutionResult> {
    const engine = this.owners.get(spec.allocationId) ?? (await this.engineFor(spec.workload))
    try {
      return await engine.reattach(spec, options)
    } finally {
      this.owners.delete(spec.allocationId)
    }
  }

  /** Removes it from the engine that listed it, or from every engine when none did. */
  async removeAllocation(allocationId: AllocationId): Promise<void> {
    const owner = this.owners.get(allocationId)
    const engines = owner !== undefined ? [owner] : this.c.engines
    const done = await Promise.allSettled(engines.map((e) => e.removeAllocation(allocationId)))
    this.owners.delete(allocationId)
    const failed = done.find((d) => d.status === 'rejected')
    if (failed !== undefined) throw failed.reason
  }
}
