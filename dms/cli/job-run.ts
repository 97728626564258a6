/**
 * `dms job run`: a job spec from -f or from flags, posted; with --wait/--follow, followed to its
 * end (states on stderr, the job's output on stdout) and exited with the container's exit code.
 */
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { basename, posix } from 'node:path'
import { ApiClient } from '../api/client.js'
import { specOfDocument } from '../orchestrator/job-spec-posted.js'
import { putBlob } from './blob.js'
import { parseBytes, parseCpu, parseWholeNumber, UnitError } from '../resources/units.js'
import {
  apiProblem,
  follow,
  LOGS_FROM,
  streamLogs,
  truncatedNote,
  wasTruncated,
  type JobView,
} from './job.js'
import { memberLines } from './member-lines.js'
import { queueFlag } from './resolve-id.js'
import { DEFAULT_MAX_PRICE, RUN_FIELD_FLAGS, type RunFieldFlag } from './flags.js'
export { DEFAULT_MAX_PRICE }
import { CliError, print, printData, terminalSafe, writeOutput } from './output.js'

/** `dms job run`'s options (commander's), with the run fields' flags (`RUN_FIELD_FLAGS`). */
export type JobRunOptions = RunOptions & Partial<Record<RunFieldFlag, string>>

interface RunOptions {
  socket: string
  file?: string
  image?: string
  /** A program the provider offers (process engine), by path; the command's args follow `--`. */
  runtime?: string
  cpu?: string
  memory?: string
  disk?: string
  gpu?: string
  gpuModel?: string
  gpuMemory?: string
  env?: string[]
  /** `file[:path]`: uploaded as a blob, staged at /inputs/<path>. */
  input?: string[]
  timeout?: string
  maxPrice?: string
  name?: string
  queueTimeout?: string
  startAt?: string
  startBy?: string
  /** Push orchestration: the bid request goes to these providers only (`providers.direct`). */
  provider?: string[]
  /** A queue's id, tag or id prefix: the job joins it (the spec's `queue`). */
  queue?: string
  wait?: boolean
  follow?: boolean
  json?: boolean
}

/** The spec flags: with -f they are refused rather than silently ignored. */
const SPEC_FLAGS = [
  'image',
  'runtime',
  'cpu',
  'memory',
  'disk',
  'gpu',
  'gpuModel',
  'gpuMemory',
  'env',
  ...RUN_FIELD_FLAGS.map((f) => f.field),
  'timeout',
  'maxPrice',
  'name',
] as const
const flagName = (k: string) => `--${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`

/** A duration in seconds: `300`, `90s`, `10m`, `2h`, `1h30m` (whole seconds, decimal only). */
export function parseDuration(v: string): number {
  const m = /^(?:(\d{1,6})h)?(?:(\d{1,6})m)?(?:(\d{1,9})s?)?$/.exec(v.trim())
  if (v.trim() === '' || m === null)
    throw new UnitError(
      `invalid duration ${JSON.stringify(v)}: write seconds (300) or e.g. 90s, 10m, 2h, 1h30m`,
      v,
    )
  return Number(m[1] ?? 0) * 3600 + Number(m[2] ?? 0) * 60 + Number(m[3] ?? 0)
}

/** `--env K=V` (repeatable) as a map; a name without `=` is refused. */
function envFrom(pairs: string[]): Record<string, string> | undefined {
  if (pairs.length === 0) return undefined
  const env: Record<string, string> = {}
  for (const p of pairs) {
    const i = p.indexOf('=')
    if (i <= 0) throw new CliError(`--env ${JSON.stringify(p)}: write NAME=value`)
    env[p.slice(0, i)] = p.slice(i + 1)
  }
  return env
}

/** --queue-timeout, --start-at and --start-by, added to a spec (from -f or the flags); the daemon checks them. */
function whenOf(opts: JobRunOptions): Record<string, unknown> {
  let queueTimeout: number | undefined
  if (opts.queueTimeout !== undefined)
    try {
      queueTimeout = parseDuration(opts.queueTimeout)
    } catch (err) {
      if (err instanceof UnitError) throw new CliError(`--queue-timeout: ${err.message}`)
      throw err
    }
  return {
    ...(queueTimeout !== undefined ? { queueTimeout } : {}),
    ...(opts.startAt !== undefined ? { startAt: opts.startAt } : {}),
    ...(opts.startBy !== undefined ? { startBy: opts.startBy } : {}),
  }
}

/**
 * `--input file[:path]`: the local file, and its path under /inputs (default: the file's name;
 * `/inputs/x` and `x` are the same). A whole argument naming an existing file is that file.
 */
export function parseInputArg(arg: string): { file: string; path: string } {
  const i = arg.indexOf(':')
  const [file, given] = existsSync(arg) || i <= 0 ? [arg, basename(arg)] : [arg.slice(0, i), arg.slice(i + 1)]
  const path = given.startsWith('/inputs/') ? given.slice('/inputs/'.length) : given
  const norm = posix.normalize(path)
  if (path === '' || path.startsWith('/') || norm.startsWith('..') || norm !== path)
    throw new CliError(
      `--input ${JSON.stringify(arg)}: the path must be a plain relative path under /inputs (e.g. data.csv or /inputs/dir/data.csv)`,
    )
  return { file, path }
}

/** Uploads each `--input` file; the spec's `inputs` entries naming the blobs. */
async function uploadInputs(opts: JobRunOptions): Promise<Array<{ path: string; sha256: string }>> {
  const inputs = (opts.input ?? []).map(parseInputArg)
  const out: Array<{ path: string; sha256: string }> = []
  for (const { file, path } of inputs) out.push({ path, sha256: (await putBlob(opts.socket, file)).sha256 })
  return out
}

/** --provider, added to the spec's `providers` (from -f or the flags). */
function directOf(
  opts: JobRunOptions,
  spec: { providers?: Record<string, unknown> },
): Record<string, unknown> {
  if (opts.provider === undefined || opts.provider.length === 0) return {}
  return { providers: { ...(spec.providers ?? {}), direct: opts.provider } }
}

/** --queue, as the spec's `queue`: the id of the queue named by its id, tag or id prefix. */
async function queueOf(opts: JobRunOptions): Promise<{ queue?: string }> {
  return opts.queue === undefined ? {} : { queue: await queueFlag(opts.socket, opts.queue) }
}

export async function specFrom(opts: JobRunOptions, command: string[]): Promise<unknown> {
  if (opts.file !== undefined) {
    const given = SPEC_FLAGS.filter((k) => opts[k] !== undefined)
    if (given.length > 0 || command.length > 0)
      throw new CliError(
        `${[...given.map(flagName), ...(command.length > 0 ? ['a command after --'] : [])].join(', ')}: not combined with -f (the file gives the whole spec): edit the file, or drop -f`,
      )
    let spec: unknown
    try {
      // A job as `dms job status --json` prints it is taken for its spec.
      spec = specOfDocument(JSON.parse(await readFile(opts.file, 'utf8')))
    } catch (err) {
      throw new CliError(`cannot read job spec ${opts.file}: ${(err as Error).message}`)
    }
    if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) return spec
    const withFlags = { ...spec, ...whenOf(opts), ...directOf(opts, spec), ...(await queueOf(opts)) }
    // Uploaded last: nothing is sent for a command line that is refused.
    const uploaded = await uploadInputs(opts)
    if (uploaded.length === 0) return withFlags
    return { ...withFlags, inputs: [...((spec as { inputs?: unknown[] }).inputs ?? []), ...uploaded] }
  }
  if (opts.image !== undefined && opts.runtime !== undefined)
    throw new CliError(
      '--image and --runtime: give one (a container image, or a program the provider offers)',
    )
  // A runtime is the program: what follows -- are its arguments, and may be none.
  if (opts.runtime === undefined && (opts.image === undefined || command.length === 0))
    throw new CliError(
      'give a spec with -f spec.json, or --image IMAGE and a command after --, or --runtime PATH and its arguments after --',
    )
  // Decimal only: Number() would read "0x10" as 16 and "" as 0.
  const read = <T>(flag: string, v: string | undefined, dflt: T, parse: (v: string) => T): T => {
    if (v === undefined) return dflt
    try {
      return parse(v)
    } catch (err) {
      if (err instanceof UnitError) throw new CliError(`${flag}: ${err.message}`)
      throw err
    }
  }
  // Checked here, sent as written: a bad size is refused before any input is uploaded.
  read('--memory', opts.memory, 0, parseBytes)
  read('--disk', opts.disk, 0, parseBytes)
  const spec = {
    name: opts.name,
    ...(opts.runtime !== undefined
      ? { runtime: opts.runtime, command: [opts.runtime, ...command] }
      : { image: opts.image, command }),
    env: envFrom(opts.env ?? []),
    ...Object.fromEntries(RUN_FIELD_FLAGS.map((f) => [f.field, opts[f.field]])),
    resources: {
      cpu: read('--cpu', opts.cpu, 1, parseCpu),
      memory: opts.memory ?? '256MiB',
      disk: opts.disk,
      gpu: read('--gpu', opts.gpu, undefined, (v) => parseWholeNumber(v, 'GPUs')),
      gpuModel: opts.gpuModel,
      gpuMemory: opts.gpuMemory,
    },
    maxDuration: read('--timeout', opts.timeout, 300, parseDuration),
    maxPrice: read('--max-price', opts.maxPrice, DEFAULT_MAX_PRICE, (v) =>
      parseWholeNumber(v, 'micro-tokens'),
    ),
    ...whenOf(opts),
    ...directOf(opts, {}),
    ...(await queueOf(opts)),
  }
  const inputs = await uploadInputs(opts)
  return inputs.length > 0 ? { ...spec, inputs } : spec
}

export async function jobRunCommand(command: string[], opts: JobRunOptions): Promise<void> {
  const api = new ApiClient(opts.socket)
  const spec = await specFrom(opts, command)
  let id: string
  try {
    id = (await api.ok<{ id: string }>('POST', '/v1/jobs', spec)).id
  } catch (err) {
    apiProblem(err, 'job refused: ')
  }
  if (!opts.wait && !opts.follow) {
    if (opts.json) printData({ id })
    else print(id)
    return
  }
  const human = !opts.json
  // States go to stderr so that stdout carries only the job's own output (as with --follow).
  const say = (s: string) => void process.stderr.write(`${s}\n`)
  if (human) say(`job ${id}`)
  // Ctrl-C stops watching, not the job: say so, and how to come back or to cancel it.
  process.once('SIGINT', () => {
    say(
      `\ndms: job ${id} goes on (Ctrl-C stopped only this view). Re-attach: dms job logs ${id} --follow (or dms job status ${id}); cancel: dms job cancel ${id}`,
    )
    process.exit(130)
  })
  let t0: number | undefined
  let logs: Promise<string | undefined> | undefined
  const job = await follow(api, id, (h) => {
    if (human) say(terminalSafe(`  ${String(h.at - (t0 ??= h.at)).padStart(6)} ms  ${h.state}`))
    if (opts.follow && logs === undefined && LOGS_FROM.has(h.state)) {
      // A pod's members line by line under their names (`b | ...`).
      const labels = memberLines((stream, text) => void process[stream].write(text))
      logs = streamLogs(opts.socket, id, {
        stdout: (d, member) => labels.piece('stdout', d, member),
        stderr: (d, member) => labels.piece('stderr', d, member),
      })
        .catch((err: unknown) => {
          say(`(logs unavailable: ${(err as Error).message})`)
          return undefined
        })
        .finally(() => labels.end())
    }
  }).catch((err: unknown) => apiProblem(err))
  const streamed = logs !== undefined && (await logs) !== undefined
  if (opts.json) printData(job)
  else {
    // A pod's output member by member (specs/job-spec.md, "Pods").
    if (job.result && !streamed) writeOutput(job.result)
    if (opts.follow && !streamed && logs !== undefined)
      say('(this daemon has no live logs route: the output above is the final result)')
    if (job.error) say(terminalSafe(`${job.state}: ${job.error.code}: ${job.error.message}`))
    const hint = maxPriceHint(job)
    if (hint !== undefined) say(hint)
    // Last, so that it is the line a reader sees: the output above is not all the job wrote.
    if (wasTruncated(job)) say(truncatedNote(id))
  }
  const code = waitExitCode(job)
  if (code !== 0)
    throw new CliError(`job ${id} ${job.state}${job.error ? `: ${job.error.message}` : ''}`, code)
}

/**
 * The exit status of `job run --wait|--follow`: the container's exit code when it ran (0 when the
 * job completed), 2 when the job ended without a run's exit code (no bids, cancelled, refused).
 */
export function waitExitCode(job: Pick<JobView, 'state' | 'result'>): number {
  // The daemon's answer is read defensively: an older one may not carry the receipt.
  const ran = (job.result as { receipt?: { receipt?: { exitCode?: unknown } } } | undefined)?.receipt?.receipt
    ?.exitCode
  if (typeof ran === 'number' && ran > 0 && ran < 256) return ran
  return job.state === 'completed' ? 0 : 2
}

/**
 * When providers declined only on price: the max price that at least one would have accepted
 * (their decline reason quotes their price), as a line to show.
 */
export function maxPriceHint(job: Pick<JobView, 'error'>): string | undefined {
  const declines = job.error?.declines ?? []
  const asked: number[] = []
  for (const d of declines)
    for (const r of d.reasons) {
      const m = /^price (\d+) exceeds the job's max price/.exec(r)
      if (m !== null && d.reasons.length === 1) asked.push(Number(m[1]))
    }
  if (asked.length === 0) return undefined
  return `hint: --max-price ${Math.min(...asked)} (micro-tokens, for the whole max duration) would have been accepted`
}
