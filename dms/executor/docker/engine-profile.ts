/**
 * What differs between Docker-API engines, chosen per engine instead of hard-coded
 * (specs/executor.md, "Docker-API engines"): the log driver the engine keeps a container's output
 * with, and the ulimits a container gets. Docker's defaults are unchanged; podman's Docker API
 * refuses `local` ("invalid log driver", every job failed) and its default ulimits can exceed
 * what the host allows (the container does not start).
 */
import type Docker from 'dockerode'

/**
 * Log drivers a container's output may be kept with: Docker's `local` (one compact file), or what
 * podman's Docker API also accepts. `none` keeps nothing: a provider restarted mid-run then
 * re-attaches without replaying what the job printed before.
 */
export const LOG_DRIVERS = ['local', 'json-file', 'k8s-file', 'journald', 'none'] as const
export type LogDriver = (typeof LOG_DRIVERS)[number]

/** Resource limits (setrlimit) a container may be given; the names the engines accept. */
export const ULIMIT_NAMES = [
  'core',
  'cpu',
  'data',
  'fsize',
  'locks',
  'memlock',
  'msgqueue',
  'nice',
  'nofile',
  'nproc',
  'rss',
  'rtprio',
  'rttime',
  'sigpending',
  'stack',
] as const
export type UlimitName = (typeof ULIMIT_NAMES)[number]

export interface Ulimit {
  name: UlimitName
  soft: number
  hard: number
}

/** The most ulimits one container is given (there are only 15 names). */
export const MAX_ULIMITS = ULIMIT_NAMES.length

/** Why `ulimits` cannot be given to an engine, or undefined when they can. */
export function ulimitsProblem(ulimits: readonly Ulimit[]): string | undefined {
  if (ulimits.length > MAX_ULIMITS) return `at most ${MAX_ULIMITS} ulimits`
  const seen = new Set<string>()
  for (const u of ulimits) {
    if (!(ULIMIT_NAMES as readonly string[]).includes(u.name))
      return `unknown ulimit ${JSON.stringify(u.name)}`
    if (seen.has(u.name)) return `ulimit ${u.name} given twice`
    seen.add(u.name)
    // -1 is "unlimited" to the engines; anything else a count the kernel takes as a 64-bit value.
    for (const v of [u.soft, u.hard]) {
      if (!Number.isSafeInteger(v) || v < -1)
        return `ulimit ${u.name}: ${v} is not -1 or a non-negative integer`
    }
    if (u.hard !== -1 && (u.soft === -1 || u.soft > u.hard)) return `ulimit ${u.name}: soft above hard`
  }
  return undefined
}

/**
 * The engine's `LogConfig` for `driver`, keeping at most about `maxLogBytes` twice over (the file
 * drivers' own size cap; journald and none take no options).
 */
export function logConfig(driver: LogDriver, maxLogBytes: number): Docker.HostConfig['LogConfig'] {
  const maxSize = String(Math.max(1024 * 1024, 2 * maxLogBytes))
  switch (driver) {
    case 'local':
      return { Type: 'local', Config: { 'max-size': maxSize, 'max-file': '1', compress: 'false' } }
    case 'json-file':
      return { Type: 'json-file', Config: { 'max-size': maxSize, 'max-file': '1' } }
    case 'k8s-file':
      return { Type: 'k8s-file', Config: { 'max-size': maxSize } }
    case 'journald':
    case 'none':
      return { Type: driver, Config: {} }
  }
}

/** The engine's `Ulimits` for `ulimits`; none leaves the engine's defaults. */
export const engineUlimits = (ulimits: readonly Ulimit[]): Docker.HostConfig['Ulimits'] =>
  ulimits.map((u) => ({ Name: u.name, Soft: u.soft, Hard: u.hard }))
