/**
 * The job machine of every job on one clock, built once (xstate builds a machine's state nodes
 * from its definition at each `createMachine`: about a millisecond of CPU per job); each job's
 * steps are its own, bound to its actor before it starts. Spec: specs/state-machines.md.
 */
import type { Clock } from '../../actors/clock.js'
import { buildJobMachine, type createJobMachine, type JobSteps } from './job-machine.js'

type JobMachine = ReturnType<typeof createJobMachine>

/** Each running job's steps, by its xstate actor system (bindJobSteps). */
const stepsBySystem = new WeakMap<object, JobSteps>()
const machinesByClock = new WeakMap<object, JobMachine>()

/**
 * The job machine of every job on `clock`, built once: xstate builds a machine's state nodes from
 * its definition at each `setup(...).createMachine`, a millisecond of CPU per job. Each job's
 * steps are its own: bound to its actor with `bindJobSteps` before it starts.
 */
export function jobMachineFor(clock: Pick<Clock, 'now'>): JobMachine {
  let machine = machinesByClock.get(clock)
  if (machine === undefined) {
    machine = buildJobMachine((system) => {
      const steps = stepsBySystem.get(system)
      if (steps === undefined)
        throw new Error('a job machine from jobMachineFor started without bindJobSteps')
      return steps
    }, clock)
    machinesByClock.set(clock, machine)
  }
  return machine
}

/** Gives the job actor `actor` (of a jobMachineFor machine) its steps; before `actor.start()`. */
export function bindJobSteps(actor: { system: object }, steps: JobSteps): void {
  stepsBySystem.set(actor.system, steps)
}
