/** What a ProcessEngine is built from: its components (injected) and its options (config). */
import type { Logger } from 'pino'
import type { Clock } from '../../../actors/clock.js'

export interface ProcessEngineComponents {
  log: Logger
  /** Times runs (the timeout, the polling of the run's files). @default systemClock */
  clock?: Clock
}

/** The host paths bound read-only into every sandbox, by default. */
export const DEFAULT_BINDS = [
  '/usr',
  '/bin',
  '/sbin',
  '/lib',
  '/lib64',
  '/lib32',
  '/etc/ssl',
  '/etc/alternatives',
]

/** The programs offered as `runtime` artifacts, by default. */
export const DEFAULT_RUNTIMES = ['/bin/sh', '/usr/bin/python3']

export interface ProcessEngineInit {
  /** Host folder holding one sub-folder per allocation (its run files and /outputs); created if missing. */
  workDir: string
  /** Where each run's outputs archive is written, for the caller to take. @default '<workDir>/archives' */
  archiveDir?: string
  /** uid the workload runs as; never 0. @default 65534 (nobody) */
  uid?: number
  /** gid the workload runs as; never 0. @default 65534 (nogroup) */
  gid?: number
  /**
   * The programs a workload may run (`runtime` artifacts, by absolute path): the member's command
   * starts with one of them. @default DEFAULT_RUNTIMES
   */
  runtimes?: string[]
  /** Host paths bound read-only at the same place in the sandbox (absent ones are skipped). @default DEFAULT_BINDS */
  binds?: string[]
  /** The cgroup folder (below each controller's root) the allocations' cgroups are made in. @default 'dms' */
  cgroupParent?: string
  /** Where the cgroup file systems are mounted. @default '/sys/fs/cgroup' */
  cgroupRoot?: string
  /** Cap on the bytes kept of each of stdout and stderr. @default 1 MiB */
  maxLogBytes?: number
  /** Cap on the total bytes of collected output files. @default 16 MiB */
  maxOutputBytes?: number
  /** Cap on the number of collected output files. @default 10000 */
  maxOutputFiles?: number
  /** How often the run's files are read and its usage sampled. @default 100 */
  pollMs?: number
  /**
   * The folder holding the GPUs' device nodes (`nvidia0`..., `nvidiactl`, `nvidia-uvm`): a run
   * gets its pinned GPUs' nodes from here, and the engine offers GPUs when it holds any
   * `nvidiaN`. A folder of stand-in nodes in tests. @default '/dev'
   */
  gpuDevDir?: string
  /**
   * The `nvidia-smi` a GPU run's use is sampled through (a stand-in script in tests). @default the
   * first of /usr/bin, /usr/local/nvidia/bin, /usr/local/bin that has one; none: GPU use is not metered
   */
  nvidiaSmi?: string
  /** Enforce `diskBytes` with a loop-mounted file system on /outputs. @default true when root */
  diskQuota?: boolean
}
