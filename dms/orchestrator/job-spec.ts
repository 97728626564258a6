/**
 * The job spec a service provider posts. Spec: specs/job-spec.md. Declared once (TypeBox): the
 * schema checks it (unknown fields refused) and gives its input type; sizes accept human units
 * ("256MiB") or bytes.
 */
import { DmsError } from '../../actors/errors.js'
import { inputsProblem, type InputSource } from '../blobs/staging.js'
import { Type, type Static, type TSchema } from '@sinclair/typebox'
import type { ErrorObject } from 'ajv'
import { compileOnUse } from '../schema.js'
import { publicKeyOfPeer } from '../contracts/party.js'
import { parseBytes, UnitError } from '../resources/units.js'
import type { Resources } from '../resources/types.js'
import { StringEnum, strictObject as obj } from '../schema.js'
import { podMembersSchema, type PodMemberSpec } from './job-spec-members.js'
import { parseContainerRun, parsePodRun, type RunSpec } from './job-spec-run.js'
import {
  cpuSchema,
  GPU_MODEL_PATTERN,
  imageRefSchema,
  postedRunFields,
  RUNTIME_PATH_MAX_LENGTH,
  RUNTIME_PATH_PATTERN,
} from '../workload/workload.js'
import { MAX_START_WITHIN_SECONDS, parseStartBy, type StartBy } from './start-by.js'

/** A queue id (`POST /v1/queues` answers one). */
export const QUEUE_ID_PATTERN = '^[A-Za-z0-9-]{1,64}$'

/** Most providers a job may push its bid request to (`providers.direct`). */
export const MAX_DIRECT = 32

/** Longest `queueTimeout` (7 days). */
export const MAX_QUEUE_TIMEOUT_SECONDS = 604800
/** Latest `startAt`: this far ahead of the time the spec is checked (30 days). */
export const MAX_START_AHEAD_MS = 30 * 86_400_000

/** A size: a byte count, or a number with a unit ("256MiB"). */
const size = Type.Union([Type.Integer({ minimum: 0 }), Type.String({ minLength: 1, maxLength: 32 })])
const opt = <T extends TSchema>(schema: T) => Type.Optional(schema)
/**
 * The workload member's run fields (`command`, `env`, `workdir`, ...: dms/workload/workload.ts),
 * each optional here: `command` is required without members, and none is given with them
 * (job-spec-run.ts).
 */
const runFields = Type.Partial(Type.Object(postedRunFields)).properties
const peers = Type.Array(Type.String({ minLength: 1, maxLength: 128 }), { maxItems: 256 })

/** The job spec as posted (specs/job-spec.md): the check of `parseJobSpec` and its input type. */
export const jobSpecSchema = obj(
  {
    name: opt(
      Type.String({
        maxLength: 128,
        // No control characters: names are shown on terminals (`dms job list`).
        pattern: '^[^\\u0000-\\u001f\\u007f-\\u009f]*$',
      }),
    ),
    image: opt({
      ...imageRefSchema,
      description:
        '[registry[:port]/]name[:tag][@digest] (specs/job-spec.md, "Image references"); required without members or runtime',
    }),
    runtime: opt(
      Type.String({
        minLength: 2,
        maxLength: RUNTIME_PATH_MAX_LENGTH,
        pattern: RUNTIME_PATH_PATTERN,
        description:
          'instead of image: a program the provider offers, by its absolute path (e.g. /usr/bin/python3), run by a process engine; command starts with it (specs/job-spec.md, "Runtimes")',
      }),
    ),
    ...runFields,
    members: opt(podMembersSchema),
    resources: opt(
      obj(
        {
          cpu: opt({ ...cpuSchema, description: 'required without members' }),
          memory: opt({ ...size, description: 'required without members' }),
          disk: opt(size),
          gpu: opt(Type.Integer({ minimum: 0, maximum: 64 })),
          gpuModel: opt(
            Type.String({
              minLength: 1,
              maxLength: 128,
              pattern: GPU_MODEL_PATTERN,
              description: 'only GPUs of this model, e.g. H100 (its words in the measured model); with gpu',
            }),
          ),
          gpuMemory: opt({ ...size, description: 'only GPUs with at least this much memory each; with gpu' }),
        },
        { description: "required without members; with them, only disk (the pod's one quota)" },
      ),
    ),
    maxDuration: Type.Integer({ minimum: 1, maximum: 604800, description: 'seconds' }),
    maxPrice: Type.Integer({
      minimum: 0,
      maximum: Number.MAX_SAFE_INTEGER,
      description: 'total for the max duration, smallest unit',
    }),
    inputs: opt(
      Type.Array(
        obj({
          path: Type.String({ minLength: 1, maxLength: 1024 }),
          content: opt(Type.String({ description: 'UTF-8 text' })),
          contentBase64: opt(Type.String({ pattern: '^[A-Za-z0-9+/]*={0,2}$' })),
          sha256: opt(
            Type.String({ pattern: '^[0-9a-f]{64}$', description: 'a blob uploaded with PUT /v1/blobs' }),
          ),
        }),
        {
          maxItems: 1000,
          description:
            'files staged read-only at /inputs: inline (content, contentBase64) or a blob (sha256)',
        },
      ),
    ),
    retries: opt(
      Type.Integer({ minimum: 0, maximum: 10, description: 'provider faults retried; default 3' }),
    ),
    network: opt(
      Type.Boolean({
        description:
          "the container may use the network (a bridge to the provider's host network); default false: no network at all. Only providers with provider.allowNetwork bid",
      }),
    ),
    providers: opt(
      obj({
        allow: opt(peers),
        deny: opt(peers),
        direct: opt(
          Type.Array(Type.String({ minLength: 1, maxLength: 128 }), {
            maxItems: MAX_DIRECT,
            description:
              'peer ids the bid request is sent to over the direct stream instead of gossip (push orchestration)',
          }),
        ),
        gossipFallback: opt(
          Type.Boolean({
            description: 'with direct: publish on gossip too when no direct provider bid (default false)',
          }),
        ),
      }),
    ),
    queueTimeout: opt(
      Type.Integer({
        minimum: 0,
        maximum: MAX_QUEUE_TIMEOUT_SECONDS,
        description:
          "seconds the job may wait in `queued` for a provider with room; 0 fails at once (NO_BIDS); default: the node's requester.queueTimeoutSeconds",
      }),
    ),
    startAt: opt(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: 'ISO 8601 time (e.g. 2026-11-22T18:00:00Z): the job waits in `scheduled` until then',
      }),
    ),
    startBy: opt(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description:
          'the latest start the job accepts: an ISO 8601 time, or a duration (600, 90s, 10m, 2h) after its start (startAt, else posting), at most 7 days; bids starting later are declined. Default: the queue deadline, or now when queueTimeout is 0',
      }),
    ),
    retryPolicy: opt(
      obj(
        {
          attempts: Type.Integer({ minimum: 1, maximum: 10, description: 'retries at most (all kinds)' }),
          backoff: opt(
            Type.Integer({
              minimum: 0,
              maximum: 3600,
              description: 'seconds before the first retry, doubled at each (at most 1 h); default 0',
            }),
          ),
          on: Type.Array(StringEnum(['providerFault', 'runFailed', 'timedOut']), {
            minItems: 1,
            maxItems: 3,
            uniqueItems: true,
          }),
        },
        {
          description:
            'retry a job whose run failed or timed out, or whose provider failed (specs/job-spec.md)',
        },
      ),
    ),
    queue: opt(
      Type.String({
        pattern: QUEUE_ID_PATTERN,
        description: 'the id of an active queue (POST /v1/queues) this job joins',
      }),
    ),
  },
  { $id: 'JobSpec' },
)

/** A job spec as posted, once it passed `jobSpecSchema` (sizes may still carry units). */
export type JobSpecInput = Static<typeof jobSpecSchema>

/** A validated job spec with sizes in bytes. */
export interface JobSpec extends RunSpec {
  name?: string
  /**
   * A pod (specs/job-spec.md, "Pods"): 2..8 containers run together. Then `image` is the first
   * member's (the contract's terms name one image), `command` is empty, `env` is `{}`, `network`
   * and the other run fields are absent (each member has its own) and `resources` are the
   * members' sums (and the disk).
   */
  members?: PodMemberSpec[]
  resources: Resources
  maxDurationSeconds: number
  maxPrice: number
  /** How many times a provider fault (silent, unreachable) is retried with another provider. */
  retries: number
  /**
   * Peer ids allowed to run the job (empty: any) and peers that must not; `direct`: the providers
   * the bid request is pushed to over the direct stream instead of gossip, and whether to publish
   * on gossip when none of them bid (`gossipFallback`).
   */
  providers: { allow: string[]; deny: string[]; direct?: string[]; gossipFallback?: boolean }
  /**
   * Set by a workflow for a task whose outputs are handed on: its archive stays with its provider
   * (downstream providers fetch from it), and the requester checks the signed manifest hash only.
   */
  outputsStay?: boolean
  /** The container may use the network (only providers with `provider.allowNetwork` bid). */
  network?: boolean
  /**
   * Files for /inputs. As parsed: inline content (`contentBase64`) or a blob id (`sha256`); once
   * posted, every input is a blob with its `sha256` and `size` (Orchestrator.post stores inline ones).
   */
  inputs?: InputSpec[]
  /**
   * Seconds the job may wait in `queued` when no provider has room (absent: the node's
   * `requester.queueTimeoutSeconds`, filled in when the job is posted; 0: fail at once).
   */
  queueTimeoutSeconds?: number
  /** When the job may start bidding (ms since epoch); it waits in `scheduled` until then. */
  startAt?: number
  /** The latest start it accepts (start-window.ts); absent: the queue deadline, or now. */
  startBy?: StartBy
  /** Retries by outcome, with backoff (specs/job-spec.md, "Retry policy"). */
  retryPolicy?: RetryPolicy
  /** The queue (batch) the job belongs to (dms/orchestrator/queues/). */
  queue?: string
}

export interface RetryPolicy {
  /** Retries at most, of every kind together (attempts already made count). */
  attempts: number
  /** Wait before the first retry; doubled at each retry, at most 1 h. */
  backoffSeconds: number
  on: Array<'providerFault' | 'runFailed' | 'timedOut'>
}

export interface InputSpec {
  path: string
  sha256?: string
  size?: number
  contentBase64?: string
  /**
   * A workflow's hand-off (specs/workflow.md): a file of an upstream provider's output archive,
   * fetched by the job's provider from that provider; the grant is signed when the job is invoked.
   */
  source?: Omit<InputSource, 'grant'>
}

/** Default of `retries`. */
export const DEFAULT_RETRIES = 3

export class InvalidJobSpecError extends DmsError {
  constructor(
    readonly field: string,
    problem: string,
  ) {
    super('INVALID_JOB_SPEC', `${field || 'spec'}: ${problem}`)
  }
}

// Compiled at the first spec checked (dms/schema.ts says why).
const validator = compileOnUse<JobSpecInput>(jobSpecSchema, { allErrors: false, strict: true })

function describe(e: ErrorObject): InvalidJobSpecError {
  const path = e.instancePath.replace(/^\//, '').replace(/\//g, '.')
  if (e.keyword === 'additionalProperties') {
    const extra = (e.params as { additionalProperty: string }).additionalProperty
    return new InvalidJobSpecError(path ? `${path}.${extra}` : extra, 'unknown field')
  }
  if (e.keyword === 'required') {
    const missing = (e.params as { missingProperty: string }).missingProperty
    return new InvalidJobSpecError(path ? `${path}.${missing}` : missing, 'is required')
  }
  if (e.keyword === 'anyOf')
    return new InvalidJobSpecError(path, 'must be a byte count or a size like "256MiB"')
  return new InvalidJobSpecError(path, e.message ?? 'is invalid')
}

/** Validates a posted spec; throws InvalidJobSpecError naming the field at fault. */
export function parseJobSpec(input: unknown, now: number = Date.now()): JobSpec {
  const validate = validator()
  if (!validate(input)) throw describe((validate.errors ?? [])[0])
  const s = input
  const bytes = (field: string, v: number | string | undefined) => {
    try {
      return v === undefined ? 0 : parseBytes(v)
    } catch (err) {
      if (err instanceof UnitError) throw new InvalidJobSpecError(field, err.message)
      throw err
    }
  }
  const run = s.members !== undefined ? parsePodRun(s, bytes) : parseContainerRun(s, bytes)
  if ('problem' in run) throw new InvalidJobSpecError(run.field, run.problem)
  const startAt = s.startAt === undefined ? undefined : parseStartAt(s.startAt, now)
  const startBy = s.startBy === undefined ? undefined : parseStartBy(s.startBy)
  if (typeof startBy === 'string') throw new InvalidJobSpecError('startBy', startBy)
  if (startBy !== undefined && 'at' in startBy && startBy.at < (startAt ?? now))
    throw new InvalidJobSpecError('startBy', startAt === undefined ? 'is in the past' : 'is before startAt')
  // As a time, bounded as the duration is.
  if (
    startBy !== undefined &&
    'at' in startBy &&
    startBy.at > (startAt ?? now) + MAX_START_WITHIN_SECONDS * 1000
  )
    throw new InvalidJobSpecError('startBy', 'must be at most 7 days after the job starts')
  return {
    name: s.name,
    ...run,
    maxDurationSeconds: s.maxDuration,
    maxPrice: s.maxPrice,
    ...(s.inputs !== undefined ? { inputs: parseInputs(s.inputs) } : {}),
    retries: s.retries ?? DEFAULT_RETRIES,
    providers: {
      allow: s.providers?.allow ?? [],
      deny: s.providers?.deny ?? [],
      ...(s.providers?.direct !== undefined && s.providers.direct.length > 0
        ? { direct: parseDirect(s.providers.direct), gossipFallback: s.providers.gossipFallback ?? false }
        : {}),
    },
    ...(s.queueTimeout !== undefined ? { queueTimeoutSeconds: s.queueTimeout } : {}),
    ...(startAt !== undefined ? { startAt } : {}),
    ...(startBy !== undefined ? { startBy } : {}),
    ...(s.retryPolicy !== undefined
      ? {
          retryPolicy: {
            attempts: s.retryPolicy.attempts,
            backoffSeconds: s.retryPolicy.backoff ?? 0,
            on: s.retryPolicy.on,
          },
        }
      : {}),
    ...(s.queue !== undefined ? { queue: s.queue } : {}),
  }
}

/** Push targets: Ed25519 peer ids (a request can be sent to them), each once. */
function parseDirect(direct: string[]): string[] {
  direct.forEach((peer, i) => {
    if (publicKeyOfPeer(peer) === undefined)
      throw new InvalidJobSpecError(`providers.direct.${i}`, 'must be an Ed25519 peer id (12D3KooW...)')
  })
  return [...new Set(direct)]
}

/** An ISO 8601 time with a date, a time and a zone (`Z` or `±hh:mm`), at most 30 days ahead. */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/

function parseStartAt(text: string, now: number): number {
  const at = ISO_TIME.test(text) ? Date.parse(text) : NaN
  if (!Number.isFinite(at))
    throw new InvalidJobSpecError(
      'startAt',
      'must be an ISO 8601 time with a zone, e.g. 2026-11-22T18:00:00Z',
    )
  if (at > now + MAX_START_AHEAD_MS) throw new InvalidJobSpecError('startAt', 'must be at most 30 days ahead')
  return at
}

function parseInputs(inputs: NonNullable<JobSpecInput['inputs']>) {
  const out: InputSpec[] = inputs.map((f, i) => {
    const given = [f.content, f.contentBase64, f.sha256].filter((v) => v !== undefined).length
    if (given !== 1) {
      throw new InvalidJobSpecError(`inputs.${i}`, 'needs exactly one of content, contentBase64, sha256')
    }
    if (f.sha256 !== undefined) return { path: f.path, sha256: f.sha256 }
    const contentBase64 =
      f.content !== undefined ? Buffer.from(f.content, 'utf8').toString('base64') : f.contentBase64
    return { path: f.path, contentBase64 }
  })
  const problem = inputsProblem(out.map((f) => ({ path: f.path, sha256: '', size: 0 })))
  if (problem !== undefined) throw new InvalidJobSpecError('inputs', problem)
  return out
}
