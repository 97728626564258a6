/**
 * Bounded shapes for everything a peer sends: every string and array has a maximum length, every
 * object a fixed set of fields. Payloads (codecs.ts) and the signed documents inside them
 * (dms/protocol/document-shapes.ts) are checked against their shape as they are decoded, before any
 * behaviour sees them, so nothing oversized is stored or worked on. Spec: specs/protocol.md
 * ("Bounds").
 */
import { DmsError } from '../../actors/errors.js'

/** Maximum lengths (characters for strings, entries for arrays and maps), one per kind of field. */
export const LIMITS = {
  /** Job, bid, contract and allocation ids (ours are UUIDs: 36). */
  id: 128,
  /** A libp2p peer id (an Ed25519 one is 52 characters). */
  peer: 128,
  /** A raw Ed25519 public key in base64url (43). */
  key: 64,
  /** An Ed25519 signature in base64url (86). */
  signature: 128,
  /** A sha256 in hex (64). */
  hash: 128,
  /** An image reference (as in the job spec). */
  image: 512,
  /** A state or status name. */
  name: 64,
  /** A reason, detail or error message meant for a person. */
  text: 4096,
  /** Decline reasons in one decline. */
  reasons: 32,
  /** Peers excluded by one bid request (the job spec's deny list, 256, plus dropped providers). */
  exclude: 512,
  /** Command arguments and environment entries of an invocation, and each one's length (job spec). */
  commandArgs: 256,
  envEntries: 256,
  envKey: 256,
  arg: 65_536,
  /** Input files of an invocation (job spec) and output files of a result (executor). */
  inputs: 1000,
  outputs: 10_000,
  path: 4096,
  /** Captured output per stream in a result or one live log message (the provider's cap). */
  log: 256 * 1024,
  /** One blob chunk. */
  chunk: 1024 * 1024,
  /** A sender handle's inbox name and each of its multiaddrs (kept with bids and jobs). */
  inbox: 256,
  addr: 1024,
  /** Multiaddrs given for one peer (an input's source provider). */
  addrs: 32,
  /** Members of a pod in a bid request, an invocation or a result (job spec: 2..8). */
  podMembers: 8,
  /** Progress updates kept per job (heartbeats are not kept). */
  updates: 100,
} as const

export type Shape =
  | { k: 'str'; max: number }
  | { k: 'num' }
  | { k: 'bool' }
  | { k: 'enum'; values: readonly string[] }
  | { k: 'bytes'; max: number }
  | { k: 'opt'; s: Shape }
  | { k: 'arr'; item: Shape; max: number }
  | { k: 'map'; value: Shape; maxKeys: number; maxKey: number }
  | { k: 'obj'; fields: Record<string, Shape> }

/** Shape builders. */
export const S = {
  str: (max: number): Shape => ({ k: 'str', max }),
  num: { k: 'num' } as Shape,
  bool: { k: 'bool' } as Shape,
  oneOf: (...values: string[]): Shape => ({ k: 'enum', values }),
  bytes: (max: number): Shape => ({ k: 'bytes', max }),
  opt: (s: Shape): Shape => ({ k: 'opt', s }),
  arr: (item: Shape, max: number): Shape => ({ k: 'arr', item, max }),
  map: (value: Shape, maxKeys: number, maxKey: number): Shape => ({ k: 'map', value, maxKeys, maxKey }),
  obj: (fields: Record<string, Shape>): Shape => ({ k: 'obj', fields }),
}

/**
 * A decoded value that does not fit its shape. `reason` is `too_long` (a string, array or map over
 * its bound) or `bad_shape` (a missing, unknown or mistyped field); `path` names the field.
 */
export class DocumentShapeError extends DmsError {
  constructor(
    readonly reason: 'too_long' | 'bad_shape',
    readonly path: string,
    message: string,
  ) {
    super('BAD_PAYLOAD', message)
  }
}

const bad = (path: string, what: string) => new DocumentShapeError('bad_shape', path, `${path} ${what}`)
const long = (path: string, n: number, max: number, unit: string) =>
  new DocumentShapeError('too_long', path, `${path} has ${n} ${unit}, more than the ${max} allowed`)

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array)

/** Throws DocumentShapeError unless `value` fits `shape`; lengths are checked before contents. */
export function checkShape(value: unknown, shape: Shape, path: string): void {
  switch (shape.k) {
    case 'opt':
      if (value !== undefined) checkShape(value, shape.s, path)
      return
    case 'str':
      if (typeof value !== 'string') throw bad(path, 'must be a string')
      if (value.length > shape.max) throw long(path, value.length, shape.max, 'characters')
      return
    case 'num':
      if (typeof value !== 'number' || !Number.isFinite(value)) throw bad(path, 'must be a number')
      return
    case 'bool':
      if (typeof value !== 'boolean') throw bad(path, 'must be true or false')
      return
    case 'enum':
      if (typeof value !== 'string' || !shape.values.includes(value))
        throw bad(path, `must be one of ${shape.values.join(', ')}`)
      return
    case 'bytes':
      if (!(value instanceof Uint8Array)) throw bad(path, 'must be bytes')
      if (value.length > shape.max) throw long(path, value.length, shape.max, 'bytes')
      return
    case 'arr':
      if (!Array.isArray(value)) throw bad(path, 'must be a list')
      if (value.length > shape.max) throw long(path, value.length, shape.max, 'entries')
      value.forEach((v, i) => checkShape(v, shape.item, `${path}[${i}]`))
      return
    case 'map': {
      // A plain object, or a Map (protobuf map fields decode to one).
      if (!(value instanceof Map) && !isPlainObject(value)) throw bad(path, 'must be an object')
      const entries: Array<[unknown, unknown]> =
        value instanceof Map ? [...(value as Map<unknown, unknown>)] : Object.entries(value)
      if (entries.length > shape.maxKeys) throw long(path, entries.length, shape.maxKeys, 'entries')
      for (const [k, v] of entries) {
        if (typeof k !== 'string') throw bad(`${path} key`, 'must be a string')
        if (k.length > shape.maxKey) throw long(`${path} key`, k.length, shape.maxKey, 'characters')
        checkShape(v, shape.value, `${path}.${k.slice(0, 64)}`)
      }
      return
    }
    case 'obj': {
      if (!isPlainObject(value)) throw bad(path, 'must be an object')
      for (const k of Object.keys(value))
        if (!Object.hasOwn(shape.fields, k) && value[k] !== undefined)
          throw bad(`${path}.${k.slice(0, 64)}`, 'is not a known field')
      for (const [k, s] of Object.entries(shape.fields)) checkShape(value[k], s, `${path}.${k}`)
      return
    }
  }
}

/**
 * Whether a sender handle is too large to keep (a bid record and a job record keep the handle or
 * its addresses to answer later). The envelope decoder bounds the number of addresses.
 */
export function handleTooLarge(h: { inbox: string; addrs: string[] }): boolean {
  return h.inbox.length > LIMITS.inbox || h.addrs.some((a) => a.length > LIMITS.addr)
}

/** A checker for one shape: returns the value typed as T, or throws DocumentShapeError. */
export const guard =
  <T>(shape: Shape, name: string) =>
  (value: unknown): T => {
    checkShape(value, shape, name)
    return value as T
  }
