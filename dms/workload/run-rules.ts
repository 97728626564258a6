/**
 * What a container run needs of a job, checked with the same code by the requester's API (so a
 * job that cannot run is refused before it is contracted and billed), by the provider (before it
 * reserves or allocates for a peer's request) and by the executor (before the engine is asked).
 * Spec: specs/job-spec.md, specs/executor.md.
 */

/**
 * The smallest CPU share a job can ask for, in cores. Docker's quota floor (`NanoCpus` below
 * 10 000 000 is refused, and 0 means no limit at all), so every run gets a real quota.
 */
export const MIN_CPU = 0.01
/** The largest CPU amount a job can ask for, in cores. */
export const MAX_CPU = 1024
/** Docker refuses memory limits below 6 MiB. */
export const MIN_MEMORY_BYTES = 6 * 1024 * 1024
/** An environment variable name the executor passes on: a POSIX shell identifier. */
export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/
/** Longest environment variable name, in characters. */
export const ENV_NAME_MAX_LENGTH = 256

/** Why `cpu` cannot be a job's CPU limit, or undefined. */
export function cpuProblem(cpu: unknown): string | undefined {
  if (typeof cpu !== 'number' || !Number.isFinite(cpu)) return 'must be a number of cores'
  if (cpu < MIN_CPU) return `must be at least ${MIN_CPU} (the smallest CPU quota Docker enforces)`
  if (cpu > MAX_CPU) return `must be at most ${MAX_CPU}`
  return undefined
}

/**
 * Why `command` cannot be a container's argv, or undefined: it needs a program, and no argument
 * may hold a NUL (the kernel's argv is NUL-terminated). `index` is the argument at fault.
 */
export function commandProblem(command: readonly unknown[]): { index: number; problem: string } | undefined {
  if (command.length === 0) return { index: 0, problem: 'is empty: images have no default command, give one' }
  for (const [index, arg] of command.entries()) {
    if (typeof arg !== 'string') return { index, problem: 'must be a string' }
    if (arg.includes('\0')) return { index, problem: 'must not contain a NUL character' }
  }
  if (command[0] === '') return { index: 0, problem: 'the program must not be empty' }
  return undefined
}

/**
 * Why `env` cannot be a container's environment, or undefined: names are shell identifiers (no
 * `=`, space or NUL, at most ENV_NAME_MAX_LENGTH characters: the record schema cannot bound a
 * key) and values hold no NUL. `name` is the variable at fault (a long one cut to 64 characters).
 */
export function envProblem(
  env: Readonly<Record<string, unknown>>,
): { name: string; problem: string } | undefined {
  for (const [name, value] of Object.entries(env)) {
    if (name.length > ENV_NAME_MAX_LENGTH)
      return { name: name.slice(0, 64), problem: `the name is longer than ${ENV_NAME_MAX_LENGTH} characters` }
    if (!ENV_NAME.test(name))
      return { name, problem: 'the name must be letters, digits and _ and not start with a digit' }
    if (typeof value !== 'string') return { name, problem: 'must be a string' }
    if (value.includes('\0')) return { name, problem: 'must not contain a NUL character' }
  }
  return undefined
}

/** How many bytes of inputs a job without a `disk` size may stage. */
export const DEFAULT_INPUTS_LIMIT_BYTES = 1024 * 1024 * 1024

/** Why inputs of these sizes do not fit the job's disk (or 1 GiB without one), or undefined. */
export function inputsSizeProblem(sizes: readonly number[], diskBytes: number): string | undefined {
  const total = sizes.reduce((n, s) => n + s, 0)
  const limit = diskBytes > 0 ? diskBytes : DEFAULT_INPUTS_LIMIT_BYTES
  return total > limit ? `inputs total ${total} bytes, more than the job's ${limit} bytes of disk` : undefined
}

/**
 * Why outputs of these sizes cannot have come from a run with this disk, or undefined: /outputs
 * lives on the job's disk quota (its `disk`, or the provider's default quota, never asked to be
 * over DEFAULT_INPUTS_LIMIT_BYTES by a requester that gave none).
 */
export function outputsSizeProblem(sizes: readonly number[], diskBytes: number): string | undefined {
  const total = sizes.reduce((n, s) => n + s, 0)
  const limit = diskBytes > 0 ? diskBytes : DEFAULT_INPUTS_LIMIT_BYTES
  return total > limit
    ? `outputs total ${total} bytes, more than the job's ${limit} bytes of disk`
    : undefined
}

/** A pod's members (specs/job-spec.md, "Pods"): how many, and how each is named. */
export const MIN_POD_MEMBERS = 2
export const MAX_POD_MEMBERS = 8
/**
 * A member's name: a workflow task's name grammar (a member is a task of a pod), 1-64 of
 * A-Z a-z 0-9 _ . - starting with a letter or digit. It names the member's folder in the archive
 * (`<member>/`) and its container, so it never starts with a dot and holds no `/`.
 */
export const POD_MEMBER_NAME_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$'
export const POD_MEMBER_NAME = new RegExp(POD_MEMBER_NAME_PATTERN)
