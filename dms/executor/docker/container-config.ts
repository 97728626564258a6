import type Docker from 'dockerode'
import type { ExecutionSpec } from '../executor.js'
import { InvalidSpecError } from '../errors.js'

/** Where the container sees its output folder. */
export const OUTPUTS_TARGET = '/outputs'
/** Where the container sees its inputs (read-only). */
export const INPUTS_TARGET = '/inputs'

/** Docker refuses memory limits below 6 MiB. */
const MIN_MEMORY_BYTES = 6 * 1024 * 1024
/** Allocation ids become a container name and a folder name: keep them to a safe alphabet. */
export const ALLOCATION_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/

export interface ContainerSettings {
  /** `uid:gid` the workload runs as. */
  user: string
  /** Prefix of the labels and of the container name. */
  labelPrefix: string
  /** Who runs the container (the provider's peer id): the `<prefix>.owner` label. */
  owner: string
  /** Host folder bind-mounted read-write at /outputs. */
  outputsDir: string
  /** Cap on the bytes the engine keeps of the container's output (for replay after a restart). */
  maxLogBytes: number
}

/** Size of the tmpfs /tmp: RAM-backed and charged to the container's memory, so never above it. */
export const tmpSizeBytes = (spec: ExecutionSpec): number => Math.min(64 * 1024 * 1024, spec.memoryBytes)

/** Rejects a spec that cannot be run as given, before anything is created. */
export function validateSpec(spec: ExecutionSpec): void {
  if (!ALLOCATION_ID.test(spec.allocationId)) {
    throw new InvalidSpecError(
      'allocationId',
      'must be 1-128 characters of A-Z a-z 0-9 _ . - (not starting with . _ -)',
    )
  }
  if (spec.image === '') throw new InvalidSpecError('image', 'is empty')
  if (spec.command.length === 0 || spec.command[0] === '') {
    throw new InvalidSpecError('command', 'is empty: imported images have no default command, give one')
  }
  if (!(spec.cpu > 0) || !Number.isFinite(spec.cpu))
    throw new InvalidSpecError('cpu', 'must be a positive number')
  if (!Number.isSafeInteger(spec.memoryBytes) || spec.memoryBytes < MIN_MEMORY_BYTES) {
    throw new InvalidSpecError('memoryBytes', `must be an integer of at least ${MIN_MEMORY_BYTES} (6 MiB)`)
  }
  if (!(spec.timeoutSeconds > 0) || !Number.isFinite(spec.timeoutSeconds)) {
    throw new InvalidSpecError('timeoutSeconds', 'must be a positive number')
  }
  if (spec.diskBytes !== undefined && !(Number.isSafeInteger(spec.diskBytes) && spec.diskBytes >= 0)) {
    throw new InvalidSpecError('diskBytes', 'must be a non-negative integer')
  }
  if (spec.gpus !== undefined && !(Number.isSafeInteger(spec.gpus) && spec.gpus >= 0)) {
    throw new InvalidSpecError('gpus', 'must be a non-negative integer')
  }
  if (spec.pidsLimit !== undefined && !(Number.isSafeInteger(spec.pidsLimit) && spec.pidsLimit > 0)) {
    throw new InvalidSpecError('pidsLimit', 'must be a positive integer')
  }
  for (const name of Object.keys(spec.env ?? {})) {
    if (!ENV_NAME.test(name))
      throw new InvalidSpecError('env', `has an invalid variable name: ${JSON.stringify(name)}`)
  }
}

/** The container's name: `<prefix>-<allocationId>`. */
export function containerName(labelPrefix: string, spec: ExecutionSpec): string {
  return `${labelPrefix}-${spec.allocationId}`
}

/** Labels every container carries, so a restarted node can find its own. */
export function containerLabels(
  labelPrefix: string,
  spec: ExecutionSpec,
  owner: string,
): Record<string, string> {
  return {
    [`${labelPrefix}.job`]: spec.jobId,
    [`${labelPrefix}.allocation`]: spec.allocationId,
    [`${labelPrefix}.managed`]: 'true',
    // Several providers may share one engine (a devnet, tests): each recovers only its own.
    [`${labelPrefix}.owner`]: owner,
  }
}

/**
 * The create request for one run: hardened by default (no network, no capabilities, no privilege
 * escalation, non-root, read-only root, bounded cpu/memory/pids), with only /tmp (tmpfs) and
 * /outputs (bind) writable.
 */
export function createOptions(
  spec: ExecutionSpec,
  settings: ContainerSettings,
): Docker.ContainerCreateOptions {
  return {
    name: containerName(settings.labelPrefix, spec),
    Image: spec.image,
    Cmd: spec.command,
    Env: Object.entries(spec.env ?? {}).map(([k, v]) => `${k}=${v}`),
    User: settings.user,
    Labels: containerLabels(settings.labelPrefix, spec, settings.owner),
    Tty: false,
    OpenStdin: false,
    AttachStdin: false,
    AttachStdout: true,
    AttachStderr: true,
    HostConfig: {
      NetworkMode: spec.network === true ? 'bridge' : 'none',
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      ReadonlyRootfs: true,
      Tmpfs: { '/tmp': `rw,noexec,nosuid,nodev,size=${tmpSizeBytes(spec)}` },
      NanoCpus: Math.round(spec.cpu * 1e9),
      Memory: spec.memoryBytes,
      MemorySwap: spec.memoryBytes,
      PidsLimit: spec.pidsLimit ?? 256,
      Mounts: [
        { Type: 'bind', Source: settings.outputsDir, Target: OUTPUTS_TARGET, ReadOnly: false },
        ...(spec.inputsDir !== undefined
          ? [{ Type: 'bind' as const, Source: spec.inputsDir, Target: INPUTS_TARGET, ReadOnly: true }]
          : []),
      ],
      ...((spec.gpus ?? 0) > 0
        ? {
            DeviceRequests: [
              { Driver: '', Count: spec.gpus, DeviceIDs: [], Capabilities: [['gpu']], Options: {} },
            ],
          }
        : {}),
      // Output is read live through attach; the engine keeps a capped copy (its `local` driver,
      // one file) only so that a restarted provider can replay it when it re-attaches.
      LogConfig: {
        Type: 'local',
        Config: {
          'max-size': String(Math.max(1024 * 1024, 2 * settings.maxLogBytes)),
          'max-file': '1',
          compress: 'false',
        },
      },
      AutoRemove: false,
      RestartPolicy: { Name: 'no' },
    },
  }
}
