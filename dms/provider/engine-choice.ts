/**
 * Which of the provider's engines runs a job: the first one offered (in `provider.engines` order)
 * that runs the job's artifact kind, with the GPUs and network it asks for, and answers now.
 * Spec: specs/executor.md ("Engines").
 */
import type { ArtifactKind, EngineCapabilities, EngineName } from '../executor/engine.js'

/** What a job needs of an engine. */
export interface EngineNeed {
  artifactKind: ArtifactKind
  /** GPUs the job asks for. */
  gpus: number
  /** Whether the job (or a member of its pod) asks for a network. */
  network: boolean
}

/** The chosen engine, or why none is: the reason goes to the requester, so it names only engines. */
export type EngineChoice = { engine: EngineName } | { refusal: string; unavailable: EngineCapabilities[] }

/** Whether `e` could run a job with `need`, were it available. */
export function engineFits(e: EngineCapabilities, need: EngineNeed): boolean {
  return (
    e.artifactKinds.includes(need.artifactKind) &&
    (need.gpus === 0 || e.gpus) &&
    e.networkPolicies.includes(need.network ? 'open' : 'none')
  )
}

/** What a job needs, in words, for "no engine here runs ...". */
function needWords(need: EngineNeed): string {
  const kind = need.artifactKind === 'image' ? 'an image' : 'a bundle'
  const extras = [...(need.gpus > 0 ? ['GPUs'] : []), ...(need.network ? ['a network'] : [])]
  return extras.length === 0 ? kind : `${kind} with ${extras.join(' and ')}`
}

export function chooseEngine(engines: readonly EngineCapabilities[], need: EngineNeed): EngineChoice {
  const fitting = engines.filter((e) => engineFits(e, need))
  const ready = fitting.find((e) => e.available)
  if (ready !== undefined) return { engine: ready.name }
  if (fitting.length === 0) return { refusal: `no engine here runs ${needWords(need)}`, unavailable: [] }
  const names = fitting.map((e) => e.name).join(', ')
  return {
    refusal: fitting.length === 1 ? `engine ${names} unavailable` : `engines ${names} unavailable`,
    unavailable: fitting,
  }
}
