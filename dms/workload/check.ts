/**
 * The one check of a workload, run by every party that receives one (the provider before it
 * reserves or runs, the executor before the engine is asked): its schema (bounds on every field),
 * then what a schema cannot say (the run rules of run-rules.ts, unique member names, a runtime's
 * command starting with its path).
 */
import { Value } from '@sinclair/typebox/value'
import { commandProblem, envProblem } from './run-rules.js'
import { workloadSchema, type MemberRun, type Workload } from './workload.js'

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
    const run = runFieldsProblem(m)
    if (run !== undefined) {
      const item = typeof run.item === 'string' ? JSON.stringify(run.item.slice(0, 64)) : run.item
      return { field: `${at}.${run.field}${item === undefined ? '' : `.${item}`}`, problem: run.problem }
    }
    // A runtime runs as its own program: an engine must not be asked to start another one.
    if (m.artifact.kind === 'runtime' && m.command[0] !== m.artifact.path)
      return { field: `${at}.command.0`, problem: `must be the runtime's path ${m.artifact.path}` }
  }
  return undefined
}

/** A run field at fault: which (`command`), the item in it (an argument's index, an env name), why. */
export interface RunFieldProblem {
  field: keyof MemberRun
  item?: number | string
  problem: string
}

/**
 * What a member's run fields (`memberRunFields`) break of the rules their schema cannot say
 * (run-rules.ts), or undefined. Every form of a member is checked with it: the workload by every
 * party, a job spec's container and pod members before anything is contracted.
 */
export function runFieldsProblem(m: Partial<MemberRun>): RunFieldProblem | undefined {
  if (m.command !== undefined) {
    const cmd = commandProblem(m.command)
    if (cmd !== undefined) return { field: 'command', item: cmd.index, problem: cmd.problem }
  }
  const env = envProblem(m.env ?? {})
  if (env !== undefined) return { field: 'env', item: env.name, problem: env.problem }
  return undefined
}
