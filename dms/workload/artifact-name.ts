/**
 * An artifact as one string (specs/executor.md, "Engines"): what a bid, the contract terms and a
 * job spec name as the job's `image`. An image is its reference (`dms-test:1`); a runtime is
 * `runtime:<path>` (`runtime:/bin/sh`), which no image reference can be (the part before a `:`
 * in a reference is a registry whose port must be digits). So every party compares names, and a
 * bid or contract from before runtimes reads as it always did.
 */
import { RUNTIME_PATH_MAX_LENGTH, RUNTIME_PATH_PATTERN, type Artifact } from './workload.js'

/** The prefix of a runtime's name. */
export const RUNTIME_PREFIX = 'runtime:'

const RUNTIME_PATH = new RegExp(RUNTIME_PATH_PATTERN)

/** The name of an artifact: an image's reference, `runtime:<path>`, `bundle:<sha256>`. */
export function artifactName(a: Artifact): string {
  switch (a.kind) {
    case 'image':
      return a.ref
    case 'runtime':
      return `${RUNTIME_PREFIX}${a.path}`
    case 'bundle':
      return `bundle:${a.sha256}`
  }
}

/** Why `path` is not a runtime's path, or undefined. */
export function runtimePathProblem(path: string): string | undefined {
  if (path.length < 2 || path.length > RUNTIME_PATH_MAX_LENGTH)
    return `must be 2-${RUNTIME_PATH_MAX_LENGTH} characters`
  if (!RUNTIME_PATH.test(path))
    return 'must be an absolute path of A-Z a-z 0-9 . _ + - segments, none starting with a dot (e.g. /usr/bin/python3)'
  return undefined
}

/**
 * The artifact a name stands for: `runtime:<path>` a runtime, anything else an image reference
 * (its grammar is the image check's). A bundle is never named this way by a job spec.
 */
export function artifactOfName(name: string): Artifact {
  if (name.startsWith(RUNTIME_PREFIX)) return { kind: 'runtime', path: name.slice(RUNTIME_PREFIX.length) }
  return { kind: 'image', ref: name }
}

/** The runtime's path a name holds, or undefined for an image. */
export const runtimeOfName = (name: string): string | undefined =>
  name.startsWith(RUNTIME_PREFIX) ? name.slice(RUNTIME_PREFIX.length) : undefined
