/**
 * Which of the provider's engines runs a job: the first one offered (in `provider.engines` order)
 * that runs the job's artifact kind, with the GPUs and network it asks for, and answers now.
 * Spec: specs/executor.md ("Engines").
 */
import type { EngineCapabilities, EngineName } from '../executor/engine.js'
import { engineFits, type EngineNeed } from '../workload/capabilities.js'

export { engineFits, type EngineNeed } from '../workload/capabilities.js'

/** The chosen engine, or why none is: the reason goes to the requester, so it names only engines. */
export type EngineChoice = { engine: EngineName } | { refusal: string; unavailable: EngineCapabilities[] }

/** What a job needs, in words, for "no engine here runs ...". */
function needWords(need: EngineNeed): string {
  const kind = { image: 'an image', runtime: 'a runtime', bundle: 'a bundle' }[need.artifactKind]
  const extras = [...(need.gpus > 0 ? ['GPUs'] : []), ...(need.network ? ['a network'] : [])]
  return extras.length === 0 ? kind : `${kind} with ${extras.join(' and ')}`
}

/** The decline when no engine offered here fits `need`, available or not. */
export const noEngineRefusal = (need: EngineNeed): string => `no engine here runs ${needWords(need)}`

export function chooseEngine(engines: readonly EngineCapabilities[], need: EngineNeed): EngineChoice {
  const fitting = engines.filter((e) => engineFits(e, need))
  const ready = fitting.find((e) => e.available)
  if (ready !== undefined) return { engine: ready.name }
  if (fitting.length === 0) return { refusal: noEngineRefusal(need), unavailable: [] }
  const names = fitting.map((e) => e.name).join(', ')
  return {
    refusal: fitting.length === 1 ? `engine ${names} unavailable` : `engines ${names} unavailable`,
    unavailable: fitting,
  }
}
