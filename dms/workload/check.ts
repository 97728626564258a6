/**
 * The one check of a workload, run by every party that receives one (the provider before it
 * reserves or runs, the executor before the engine is asked): its schema (bounds on every field),
 * then what a schema cannot say (the run rules of run-rules.ts, unique member names).
 */
import { Value } from '@sinclair/typebox/value'
import { commandProblem, envProblem } from './run-rules.js'
import { workloadSchema, type Workload } from './workload.js'

/** What is wrong with a workload: the field at fault (`members.0.command.1`) and why. */
export interface WorkloadProblem {
  field: string
  problem: string
}

/** Why `w` is not a workload that can run, or undefined. */
export function workloadProblem(w: unknown): WorkloadProblem | undefined {
  const first = Value.Errors(workloadSchema, w).First()
  if (first !== undefined) {
    const field = first.path.replace(/^\//, '').replaceAll('/', '.') || 'workload'
    return { field, problem: first.message }
  }
  const seen = new Set<string>()
  for (const [i, m] of (w as Workload).members.entries()) {
    const at = `members.${i}`
    if (seen.has(m.name)) return { field: `${at}.name`, problem: `repeats ${JSON.stringify(m.name)}` }
    seen.add(m.name)
    const cmd = commandProblem(m.command)
    if (cmd !== undefined) return { field: `${at}.command.${cmd.index}`, problem: cmd.problem }
    const env = envProblem(m.env)
    if (env !== undefined)
      return { field: `${at}.env.${JSON.stringify(env.name.slice(0, 64))}`, problem: env.problem }
  }
  return undefined
}
