/**
 * The worker descriptor (specs/functions.md, "Workers"): the executables and files of a program by
 * content hash, the functions it implements with their versions, the build system version, the
 * cores and timeout it needs. Declared once (TypeBox); `parseWorker` checks the shape (unknown
 * fields refused, every size and count bounded) and what a schema cannot say (paths unique, no
 * path under another file). The worker's id is the sha256 of its canonical JSON: the same
 * descriptor is the same worker wherever it is registered.
 */
import { Type, type Static } from '@sinclair/typebox'
import { createHash } from 'node:crypto'
import { canonicalJson } from '../../actors/canonical-json.js'
import { compileOnUse, StringEnum, StringMap, strictObject } from '../schema.js'
import { fieldProblem } from './describe-error.js'
import { InvalidWorkerError } from './errors.js'
import { fileRefSchema, nameSchema, relPathSchema, versionSchema, type BlobRef } from './names.js'

/** A worker's id: the sha256 (hex) of its descriptor's canonical JSON. */
export type WorkerId = string

/** Most files (executables and others together) one worker holds. */
export const MAX_WORKER_FILES = 1024
/** Most bytes of one worker's files together: its copy must fit the job's /tmp and disk. */
export const MAX_WORKER_BYTES = 48 * 1024 * 1024
/** Most functions one worker implements. */
export const MAX_WORKER_FUNCTIONS = 256

const MiB = 1024 * 1024

/** The worker descriptor as posted (`POST /v1/workers`). */
export const workerSchema = strictObject(
  {
    name: nameSchema,
    hostPlatform: StringEnum(['linux'], { description: 'the platform its executables run on' }),
    buildSystemVersion: versionSchema,
    executables: Type.Array(fileRefSchema, {
      minItems: 1,
      maxItems: 16,
      description: 'the programs; the first is the one each action runs',
    }),
    files: Type.Optional(Type.Array(fileRefSchema, { maxItems: MAX_WORKER_FILES })),
    dirs: Type.Optional(
      Type.Array(relPathSchema, { maxItems: 256, description: 'empty folders made beside the files' }),
    ),
    environment: Type.Optional(
      StringMap(Type.String({ maxLength: 4096, pattern: '^[^\\u0000]*$' }), {
        maxProperties: 64,
        propertyNames: { pattern: '^[A-Za-z_][A-Za-z0-9_]{0,127}$' },
      }),
    ),
    cores: Type.Integer({ minimum: 1, maximum: 64, description: 'the CPU cores each action gets' }),
    memoryBytes: Type.Optional(
      Type.Integer({
        minimum: 6 * MiB,
        maximum: 256 * 1024 * MiB,
        description: 'the memory each action gets; default 256 MiB',
      }),
    ),
    timeout: Type.Integer({
      minimum: 1,
      maximum: 86_400,
      description: "seconds: each action's max duration",
    }),
    functions: Type.Array(strictObject({ name: nameSchema, version: versionSchema }), {
      minItems: 1,
      maxItems: MAX_WORKER_FUNCTIONS,
    }),
  },
  { $id: 'WorkerDescriptor' },
)

export type WorkerDescriptor = Static<typeof workerSchema>

/** Memory an action needs beyond its worker's files (copied to /tmp, a tmpfs the memory limit counts). */
export const COPY_HEADROOM_BYTES = 16 * MiB

/** Memory of an action when its worker says none. */
export const DEFAULT_WORKER_MEMORY_BYTES = 256 * MiB

const check = compileOnUse<WorkerDescriptor>(workerSchema, { allErrors: false, strict: true })

/** The id of a checked descriptor. */
export function workerIdOf(w: WorkerDescriptor): WorkerId {
  return createHash('sha256').update(canonicalJson(w)).digest('hex')
}

/** Every file of the worker: executables first, then the others. */
export function workerFiles(w: WorkerDescriptor): Array<BlobRef & { path: string }> {
  return [...w.executables, ...(w.files ?? [])]
}

/**
 * Checks a posted descriptor; throws InvalidWorkerError naming the field at fault. Returns it as
 * posted (no defaults filled in, so its id is the hash of what the client sent, canonically).
 */
export function parseWorker(input: unknown): WorkerDescriptor {
  const validate = check()
  if (!validate(input)) throw new InvalidWorkerError(...fieldProblem(validate.errors?.[0]))
  const w = input
  const files = workerFiles(w)
  if (files.length > MAX_WORKER_FILES)
    throw new InvalidWorkerError('files', `${files.length} files, at most ${MAX_WORKER_FILES} together`)
  const total = files.reduce((n, f) => n + f.size, 0)
  if (total > MAX_WORKER_BYTES)
    throw new InvalidWorkerError('files', `${total} bytes of files, at most ${MAX_WORKER_BYTES} together`)
  // The launcher's copy of the files in /tmp (a tmpfs) counts against the job's memory.
  const memory = w.memoryBytes ?? DEFAULT_WORKER_MEMORY_BYTES
  if (total + COPY_HEADROOM_BYTES > memory)
    throw new InvalidWorkerError(
      'memoryBytes',
      `${memory} bytes of memory cannot hold the ${total} bytes of files copied to /tmp plus ${COPY_HEADROOM_BYTES} to run`,
    )
  const fieldOf = (i: number) =>
    i < w.executables.length ? `executables.${i}.path` : `files.${i - w.executables.length}.path`
  const paths = new Map<string, string>()
  files.forEach((f, i) => {
    if (paths.has(f.path)) throw new InvalidWorkerError(fieldOf(i), `${f.path} is named twice`)
    paths.set(f.path, fieldOf(i))
  })
  // A file cannot also be a folder of another file, or of a dir.
  const under = (p: string) =>
    p
      .split('/')
      .map((_, j, s) => s.slice(0, j).join('/'))
      .filter((d) => d !== '')
  files.forEach((f, i) => {
    for (const d of under(f.path))
      if (paths.has(d)) throw new InvalidWorkerError(fieldOf(i), `${d} is a file, not a folder`)
  })
  ;(w.dirs ?? []).forEach((d, i) => {
    for (const p of [d, ...under(d)])
      if (paths.has(p)) throw new InvalidWorkerError(`dirs.${i}`, `${p} is a file, not a folder`)
  })
  const seen = new Set<string>()
  w.functions.forEach((f, i) => {
    const key = `${f.name}\0${f.version}`
    if (seen.has(key)) throw new InvalidWorkerError(`functions.${i}`, `${f.name} ${f.version} is named twice`)
    seen.add(key)
  })
  return w
}
