import type Docker from 'dockerode'
import type { ExecutionSpec } from '../executor.js'
import { InvalidSpecError } from '../errors.js'
import { pinnedGpus } from '../common/gpu-indices.js'
import { workloadProblem } from '../../workload/check.js'
import { imageRefProblem } from '../../workload/image-ref.js'
import type { WorkloadMember } from '../../workload/workload.js'
import { startCpuLimit } from './cpu-limit.js'
import { engineUlimits, logConfig, type LogDriver, type Ulimit } from './engine-profile.js'

/** Where the container sees its output folder. */
export const OUTPUTS_TARGET = '/outputs'
/** Where the container sees its inputs (read-only). */
export const INPUTS_TARGET = '/inputs'

/** Allocation ids become a container name and a folder name: keep them to a safe alphabet. */
export const ALLOCATION_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/

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
  /** The engine's log driver for that copy (engine-profile.ts). @default 'local' */
  logDriver?: LogDriver
  /** Resource limits set in the container; none leaves the engine's defaults. @default [] */
  ulimits?: readonly Ulimit[]
  /** A pod member: its name (in the container's name and `<prefix>.member` label). */
  member?: string
  /** A pod member: the host folder bind-mounted read-write at /pod, shared by the members. */
  podDir?: string
}

/** Size of the tmpfs /tmp: RAM-backed and charged to the container's memory, so never above it. */
export const tmpSizeBytes = (member: WorkloadMember): number =>
  Math.min(64 * 1024 * 1024, member.resources.memoryBytes)

/** Only an image reference may reach an engine URL (`/images/<image>/json`). */
export function checkImage(image: string): void {
  const problem = imageRefProblem(image)
  if (problem !== undefined) throw new InvalidSpecError('image', problem)
}

/** Rejects a spec that cannot be run as given, before anything is created. */
export function validateSpec(spec: ExecutionSpec): void {
  if (!ALLOCATION_ID.test(spec.allocationId)) {
    throw new InvalidSpecError(
      'allocationId',
      'must be 1-128 characters of A-Z a-z 0-9 _ . - (not starting with . _ -)',
    )
  }
  // The same rules as the requester's API and the provider's (dms/workload/).
  const problem = workloadProblem(spec.workload)
  if (problem !== undefined) throw new InvalidSpecError(`workload.${problem.field}`, problem.problem)
  for (const [i, m] of spec.workload.members.entries()) {
    // The image goes into engine URLs, so nothing but a reference may reach them.
    if (m.artifact.kind !== 'image') {
      throw new InvalidSpecError(
        `workload.members.${i}.artifact`,
        `is a ${m.artifact.kind}: the Docker engine runs container images only`,
      )
    }
    const image = imageRefProblem(m.artifact.ref)
    if (image !== undefined) throw new InvalidSpecError(`workload.members.${i}.artifact.ref`, image)
  }
  if (!(spec.timeoutSeconds > 0) || !Number.isFinite(spec.timeoutSeconds)) {
    throw new InvalidSpecError('timeoutSeconds', 'must be a positive number')
  }
  if (spec.diskBytes !== undefined && !(Number.isSafeInteger(spec.diskBytes) && spec.diskBytes >= 0)) {
    throw new InvalidSpecError('diskBytes', 'must be a non-negative integer')
  }
  if (spec.pidsLimit !== undefined && !(Number.isSafeInteger(spec.pidsLimit) && spec.pidsLimit > 0)) {
    throw new InvalidSpecError('pidsLimit', 'must be a positive integer')
  }
  // A pod's members have no GPUs (pod-config.ts): the pinned GPUs are the first member's.
  pinnedGpus(spec, spec.workload.members[0])
}

/** A member's image (validateSpec checked that every member's artifact is one). */
export const imageOfMember = (member: WorkloadMember): string =>
  member.artifact.kind === 'image' ? member.artifact.ref : ''

/** The container's name: `<prefix>-<allocationId>`, or `<prefix>-<allocationId>-<member>` in a pod. */
export function containerName(labelPrefix: string, spec: ExecutionSpec, member?: string): string {
  return member === undefined
    ? `${labelPrefix}-${spec.allocationId}`
    : `${labelPrefix}-${spec.allocationId}-${member}`
}

/** Labels every container carries, so a restarted node can find its own. */
export function containerLabels(
  labelPrefix: string,
  spec: ExecutionSpec,
  owner: string,
  member?: string,
): Record<string, string> {
  return {
    ...(member !== undefined ? { [`${labelPrefix}.member`]: member } : {}),
    [`${labelPrefix}.job`]: spec.jobId,
    [`${labelPrefix}.allocation`]: spec.allocationId,
    [`${labelPrefix}.managed`]: 'true',
    // Several providers may share one engine (a devnet, tests): each recovers only its own.
    [`${labelPrefix}.owner`]: owner,
  }
}

/**
 * The create request for one container, `member` of `spec`'s workload: hardened by default (no network, no capabilities, no privilege
 * escalation, non-root, read-only root, no /dev/shm, bounded cpu/memory/pids), with only /tmp
 * (tmpfs) and /outputs (bind) writable.
 */
export function createOptions(
  spec: ExecutionSpec,
  member: WorkloadMember,
  settings: ContainerSettings,
): Docker.ContainerCreateOptions {
  const r = member.resources
  const gpus = pinnedGpus(spec, member)
  return {
    name: containerName(settings.labelPrefix, spec, settings.member),
    Image: imageOfMember(member),
    Cmd: member.command,
    ...(member.workdir !== undefined ? { WorkingDir: member.workdir } : {}),
    Env: Object.entries(member.env).map(([k, v]) => `${k}=${v}`),
    User: settings.user,
    Labels: containerLabels(settings.labelPrefix, spec, settings.owner, settings.member),
    Tty: false,
    OpenStdin: false,
    AttachStdin: false,
    AttachStdout: true,
    AttachStderr: true,
    HostConfig: {
      NetworkMode: member.network === 'outbound' ? 'bridge' : 'none',
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      ReadonlyRootfs: true,
      Tmpfs: { '/tmp': `rw,noexec,nosuid,nodev,size=${tmpSizeBytes(member)}` },
      // A private IPC namespace without /dev/shm: otherwise the engine mounts a writable 64 MiB
      // tmpfs there, outside the read-only root, /tmp's size and the memory the job asked for.
      IpcMode: 'none',
      // The job's share over a period long enough for the start; 100 ms once started (cpu-limit.ts).
      ...startCpuLimit(r.cpu),
      Memory: r.memoryBytes,
      MemorySwap: r.memoryBytes,
      PidsLimit: spec.pidsLimit ?? 256,
      Mounts: [
        { Type: 'bind', Source: settings.outputsDir, Target: OUTPUTS_TARGET, ReadOnly: false },
        ...(spec.inputsDir !== undefined
          ? [{ Type: 'bind' as const, Source: spec.inputsDir, Target: INPUTS_TARGET, ReadOnly: true }]
          : []),
        ...(settings.podDir !== undefined
          ? [{ Type: 'bind' as const, Source: settings.podDir, Target: '/pod', ReadOnly: false }]
          : []),
      ],
      // Exactly the GPUs the ledger holds for this run, by index (a count would let the engine
      // hand out any, another job's included); model and memory were matched when bidding.
      ...(gpus.length > 0
        ? {
            DeviceRequests: [
              {
                Driver: '',
                Count: 0,
                DeviceIDs: gpus.map(String),
                Capabilities: [['gpu']],
                Options: {},
              },
            ],
          }
        : {}),
      // Output is read live through attach; the engine keeps a capped copy (Docker's `local`
      // driver, one file) only so that a restarted provider can replay it when it re-attaches.
      LogConfig: logConfig(settings.logDriver ?? 'local', settings.maxLogBytes),
      ...(settings.ulimits !== undefined && settings.ulimits.length > 0
        ? { Ulimits: engineUlimits(settings.ulimits) }
        : {}),
      AutoRemove: false,
      RestartPolicy: { Name: 'no' },
    },
  }
}
