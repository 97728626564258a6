/**
 * What runs, declared once: a workload is a list of members (a plain job is a pod of one), each
 * with its engine-neutral artifact, its command, env, network policy and its share of the
 * resources. The TypeBox schema is the declaration; the type is read from it. Every party carries
 * it whole (specs/executor.md, "What runs"; specs/layout.md, "Where a new workload field goes").
 *
 * This folder sits below protocol/ and executor/: it imports only actors/ and itself.
 */
import { Type, type Static, type TObject } from '@sinclair/typebox'
import { IMAGE_REF_MAX_LENGTH } from './image-ref.js'
import { MAX_CPU, MAX_POD_MEMBERS, MIN_CPU, MIN_MEMORY_BYTES, POD_MEMBER_NAME_PATTERN } from './run-rules.js'

/** Longest argument or env value, in characters (the job spec's bound). */
export const ARG_MAX_LENGTH = 65536
/** Most arguments in a command, and most env entries. */
export const MAX_ARGS = 256
/** Longest working directory, in characters (Linux's PATH_MAX). */
export const WORKDIR_MAX_LENGTH = 4096

/** A GPU model a job asks for (`H100`, `NVIDIA GeForce RTX 4090`): letters, digits, spaces and `._()+/-`. */
export const GPU_MODEL_PATTERN = '^[A-Za-z0-9][A-Za-z0-9 ._()+/-]*$'

/** Most GPUs one member may ask for. */
export const MAX_GPUS = 64

const strict = { additionalProperties: false } as const

/** An image reference's bounds (its grammar is `imageRefProblem`'s, dms/workload/image-ref.ts). */
export const imageRefSchema = Type.String({ minLength: 1, maxLength: IMAGE_REF_MAX_LENGTH })

/** A member's CPU cores (fractions allowed), enforced as a quota. */
export const cpuSchema = Type.Number({ minimum: MIN_CPU, maximum: MAX_CPU })

/** A container image, by reference (dms/workload/image-ref.ts): what a container engine runs. */
export const imageArtifactSchema = Type.Object({ kind: Type.Literal('image'), ref: imageRefSchema }, strict)

/**
 * A content-addressed bundle (a blob's sha256, hex) for a process engine. Declared so that the
 * shape has room for it; no engine runs one yet (the Docker engine refuses it).
 */
export const bundleArtifactSchema = Type.Object(
  { kind: Type.Literal('bundle'), sha256: Type.String({ pattern: '^[0-9a-f]{64}$' }) },
  strict,
)

/** A runtime's path: absolute, plain segments of `A-Z a-z 0-9 . _ + -`, none starting with a dot. */
export const RUNTIME_PATH_PATTERN = '^(/[A-Za-z0-9_+-][A-Za-z0-9._+-]*)+$'
/** Longest runtime path, in characters. */
export const RUNTIME_PATH_MAX_LENGTH = 256

/**
 * A program the provider offers (an allow-list, e.g. `/usr/bin/python3`), by its absolute path on
 * the provider: what a process engine runs when the workload brings no files of its own. The
 * member's command starts with this path. 1-256 of `A-Z a-z 0-9 . _ + - /`, no `..` segment.
 */
export const runtimeArtifactSchema = Type.Object(
  {
    kind: Type.Literal('runtime'),
    path: Type.String({ minLength: 2, maxLength: RUNTIME_PATH_MAX_LENGTH, pattern: RUNTIME_PATH_PATTERN }),
  },
  strict,
)

/**
 * A working directory: an absolute path (in the container or process), no NUL (the kernel's paths
 * are NUL-terminated), at most 4096 characters.
 */
export const workdirSchema = Type.String({
  minLength: 1,
  maxLength: WORKDIR_MAX_LENGTH,
  pattern: '^/[^\\u0000]*$',
  description: "the working directory: an absolute path (default: the image's)",
})

/** What a member runs, independent of the engine. */
export const artifactSchema = Type.Union([imageArtifactSchema, bundleArtifactSchema, runtimeArtifactSchema])

/** A member's GPUs: how many, and optionally which model and how much memory each has at least. */
export const gpuShareSchema = Type.Object(
  {
    count: Type.Integer({ minimum: 1, maximum: MAX_GPUS }),
    // Printable words only: a model is quoted back in declines and logs.
    model: Type.Optional(Type.String({ minLength: 1, maxLength: 128, pattern: GPU_MODEL_PATTERN })),
    minMemoryBytes: Type.Optional(Type.Integer({ minimum: 0 })),
  },
  strict,
)

/** A member's share of the resources. */
export const memberResourcesSchema = Type.Object(
  {
    /** CPU cores (fractions allowed), enforced as a quota. */
    cpu: cpuSchema,
    /** Memory limit in bytes (no swap). */
    memoryBytes: Type.Integer({ minimum: MIN_MEMORY_BYTES }),
    /** Disk the member may write to /outputs, in bytes. @default 0 (the provider's default quota) */
    diskBytes: Type.Optional(Type.Integer({ minimum: 0 })),
    /** GPUs passed through. @default none */
    gpus: Type.Optional(gpuShareSchema),
  },
  strict,
)

/** Whether a member may reach the network: `none` (only lo) or `outbound` (a bridged network). */
export const networkPolicySchema = Type.Union([Type.Literal('none'), Type.Literal('outbound')])

/** argv: the first item is the program (images have no default command here). */
export const commandSchema = Type.Array(Type.String({ maxLength: ARG_MAX_LENGTH }), {
  minItems: 1,
  maxItems: MAX_ARGS,
  description: 'argv: the first item is the program (images have no default command)',
})

/** The environment: names are shell identifiers (`envProblem`, run-rules.ts). */
export const envSchema = Type.Record(
  Type.String({ maxLength: 256 }),
  Type.String({ maxLength: ARG_MAX_LENGTH }),
  {
    maxProperties: MAX_ARGS,
  },
)

/**
 * The fields of a member that every form of it carries under the same name and in the same shape:
 * the workload member, a job spec's one container and its pod members (dms/orchestrator/), a
 * workflow task, the stored job records. Declared once, here: a field added to this table reaches
 * the job spec's schema (REST, workflows), its validated type and its mapping to the workload
 * without a line elsewhere (`runFieldsOf` copies them by these names); bound it here, and add any
 * rule its schema cannot say to `runFieldsProblem` (check.ts). A new field is optional (absent:
 * the engine's default), so that records stored without it stay valid; a peer that does not know
 * it refuses a workload that sets it (the schema is strict). The engine that honours it reads it
 * from the member (specs/layout.md, "Where a new piece goes").
 *
 * The other fields have a form of their own outside the workload: `image` (the artifact),
 * `network` (a flag, the policy here) and the resources (sizes with units in a job spec).
 */
export const memberRunFields = {
  command: commandSchema,
  env: envSchema,
  /** Where the command starts. @default the artifact's own (an image's WORKDIR) */
  workdir: Type.Optional(workdirSchema),
}

/** The run fields as a job spec posts them: `env` may be left out (`{}`). */
export const postedRunFields = { ...memberRunFields, env: Type.Optional(envSchema) }

/** One member of a workload: one container (or process) of the run. */
export const workloadMemberSchema = Type.Object(
  {
    /** Unique in the workload; a pod's member names its outputs' folder (`<name>/`). */
    name: Type.String({ minLength: 1, maxLength: 64, pattern: POD_MEMBER_NAME_PATTERN }),
    artifact: artifactSchema,
    ...memberRunFields,
    /** @default 'none' */
    network: networkPolicySchema,
    resources: memberResourcesSchema,
  },
  strict,
)

/**
 * What runs: 1 member (a plain job) or a pod of 2..8 (specs/job-spec.md, "Pods"). A workload of
 * one member runs as a single container, its outputs at the archive's root; a pod's members each
 * under `<name>/`.
 */
export const workloadSchema = Type.Object(
  { members: Type.Array(workloadMemberSchema, { minItems: 1, maxItems: MAX_POD_MEMBERS }) },
  strict,
)

export type Artifact = Static<typeof artifactSchema>
export type GpuShare = Static<typeof gpuShareSchema>
/** Which GPUs a member asks, beside their count: a model, a memory floor each. */
export type GpuChoice = Omit<GpuShare, 'count'>
export type MemberResources = Static<typeof memberResourcesSchema>
export type NetworkPolicy = Static<typeof networkPolicySchema>
export type WorkloadMember = Static<typeof workloadMemberSchema>
/** A member's run fields (`memberRunFields`): what every form of a member carries as is. */
export type MemberRun = Static<TObject<typeof memberRunFields>>
export type Workload = Static<typeof workloadSchema>

/** The name of the one member of a plain job. */
export const SINGLE_MEMBER = 'main'

/** A pod of more than one member (outputs under `<member>/`, one container per member). */
export const isPod = (w: Workload): boolean => w.members.length > 1

/** The image a member runs, or undefined when its artifact is not an image. */
export const imageOf = (m: Pick<WorkloadMember, 'artifact'>): string | undefined =>
  m.artifact.kind === 'image' ? m.artifact.ref : undefined

/** The members' resources added up (in order from 0, as every party adds them). */
export function workloadTotals(w: { members: ReadonlyArray<Pick<WorkloadMember, 'resources'>> }): {
  cpu: number
  memoryBytes: number
  diskBytes: number
  gpus: number
} {
  let cpu = 0
  let memoryBytes = 0
  let diskBytes = 0
  let gpus = 0
  for (const m of w.members) {
    cpu += m.resources.cpu
    memoryBytes += m.resources.memoryBytes
    diskBytes += m.resources.diskBytes ?? 0
    gpus += m.resources.gpus?.count ?? 0
  }
  return { cpu, memoryBytes, diskBytes, gpus }
}

/** The policy of a flat `network` flag (a job spec, records from before the workload). */
export const policyOf = (network: boolean | undefined): NetworkPolicy =>
  network === true ? 'outbound' : 'none'

/** The names of the run fields (`memberRunFields`). */
export const RUN_FIELDS = Object.keys(memberRunFields) as ReadonlyArray<keyof MemberRun>

/**
 * The run fields of `x` (a job spec, a flat member, a stored record), by `memberRunFields`' names
 * and only those given: whatever else `x` holds stays out of the workload.
 */
export function runFieldsOf(x: MemberRun): MemberRun {
  const out: Record<string, unknown> = {}
  for (const k of RUN_FIELDS) if (x[k] !== undefined) out[k] = x[k]
  return out as MemberRun
}

/** A container member as written outside the workload: a job spec's pod member, an older record. */
export type FlatMember = MemberRun & {
  name: string
  image: string
  network?: boolean
  cpu: number
  memoryBytes: number
}

/** The run fields of a posted container or member, `env` defaulting to `{}`. */
export const postedRunOf = (s: Omit<MemberRun, 'env'> & { env?: MemberRun['env'] }): MemberRun =>
  runFieldsOf({ ...s, env: s.env ?? {} })

/** The run fields in the posted form: `env` left out when empty (the inverse of `postedRunOf`). */
export function postingOf(s: MemberRun): Omit<MemberRun, 'env'> & { env?: MemberRun['env'] } {
  const { env, ...rest } = runFieldsOf(s)
  return { ...rest, ...(Object.keys(env).length > 0 ? { env } : {}) }
}

/** The workload member of a flat one. */
export const memberOf = (m: FlatMember): WorkloadMember => ({
  name: m.name,
  artifact: { kind: 'image', ref: m.image },
  ...runFieldsOf(m),
  network: policyOf(m.network),
  resources: { cpu: m.cpu, memoryBytes: m.memoryBytes },
})

/**
 * A plain job's one member: its artifact (a string is an image reference) and resources, with the
 * run fields and network it runs.
 */
export function singleMemberOf(
  artifact: Artifact | string,
  run: MemberRun & { network?: boolean },
  r: { cpu: number; memoryBytes: number; diskBytes: number; gpus: number },
  gpu: GpuChoice = {},
): WorkloadMember {
  return {
    name: SINGLE_MEMBER,
    artifact: typeof artifact === 'string' ? { kind: 'image', ref: artifact } : artifact,
    ...runFieldsOf(run),
    network: policyOf(run.network),
    resources: {
      cpu: r.cpu,
      memoryBytes: r.memoryBytes,
      ...(r.diskBytes > 0 ? { diskBytes: r.diskBytes } : {}),
      ...(r.gpus > 0 ? { gpus: { count: r.gpus, ...gpu } } : {}),
    },
  }
}
