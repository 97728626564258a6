/** What a DockerExecutor is built from: its components (injected) and its options (config). */
import type { Clock } from '../../../actors/clock.js'
import type { Logger } from 'pino'
import type { LogDriver, Ulimit } from './engine-profile.js'

export interface DockerExecutorComponents {
  log: Logger
  /**
   * Times runs (the timeout, the stream drain, stats sampling). Containers run in the engine's
   * real time, so a node passes none. @default systemClock
   */
  clock?: Clock
}

export interface DockerExecutorInit {
  /** The engine's socket. @default DOCKER_HOST, else /var/run/docker.sock (dockerode's defaults) */
  socketPath?: string
  /** Host folder holding one sub-folder per running allocation (its /outputs); created if missing. */
  workDir: string
  /**
   * Where each run's outputs archive (`<allocationId>.tar`) is written, for the caller to take;
   * created if missing. Best on the file system of the blob store, so that taking it is a rename.
   * @default '<workDir>/archives'
   */
  archiveDir?: string
  /** `uid:gid` the workload runs as; never root. @default '65534:65534' (nobody) */
  user?: string
  /** Cap on the bytes kept of each of stdout and stderr. @default 1 MiB */
  maxLogBytes?: number
  /** Cap on the total bytes of collected output files. @default 16 MiB */
  maxOutputBytes?: number
  /** Cap on the number of collected output files. @default 10000 */
  maxOutputFiles?: number
  /** Prefix of the container labels (`<prefix>.job`, ...) and name (`<prefix>-<allocationId>`). @default 'dms' */
  labelPrefix?: string
  /** How often resource usage is sampled while the container runs. @default 500 */
  statsIntervalMs?: number
  /**
   * Enforce `diskBytes` with a loop-mounted file system on /outputs (needs root and loop devices).
   * @default true when running as root
   */
  diskQuota?: boolean
  /** Pull missing images from a registry (with progress events). @default false: no registry is assumed */
  pullImages?: boolean
  /**
   * Who this executor runs for (the provider's peer id), set as the `<prefix>.owner` label:
   * `listRuns` and so a restarted provider's clean-up only ever touch this owner's containers.
   * @default 'local'
   */
  owner?: string
  /**
   * The log driver the engine keeps each container's output with (for replay on re-attach).
   * Podman's Docker API refuses `local`: use `k8s-file` or `json-file` there.
   * @default 'local'
   */
  logDriver?: LogDriver
  /**
   * Resource limits set in every container (e.g. `nofile`), for an engine whose defaults exceed
   * what the host allows. @default [] (the engine's defaults)
   */
  ulimits?: Ulimit[]
}
