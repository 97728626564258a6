/**
 * What every payload codec (codecs.ts) is built from: a codec over a generated protobuf message
 * with its wire types and bounded shape checked before mapping, signed documents as canonical JSON
 * bytes, and the small mappings several payloads share; and why a payload was refused at decode.
 */
import type { PayloadCodec } from '../../actors/codec.js'
import { checkWire, WireFormatError } from '../../actors/wire.js'
import type * as P from '../../proto/dms.js'
import type { WireSchema } from '../../proto/wire-schema.js'
import { canonicalJson } from '../../actors/canonical-json.js'
import type { ApprovalCredential } from '../contracts/model.js'
import { asApproval } from './document-shapes.js'
import type { Resources } from '../resources/types.js'
import { checkShape, DocumentShapeError } from './bounds.js'
import { WIRE_SHAPES } from './shapes.js'

interface ProtoMessage<W> {
  encode(obj: Partial<W>): Uint8Array
  decode(buf: Uint8Array): W
}

/**
 * A codec from a generated protobuf message: its wire-type schema is checked strictly before
 * protons decodes, and the decoded message against its bounded shape (shapes.ts) before
 * it is mapped to the payload type (which parses and shape-checks any signed document in it).
 */
export function proto<T, W>(
  msg: ProtoMessage<W>,
  name: keyof typeof WIRE_SHAPES,
  schema: WireSchema,
  toWire: (v: T) => Partial<W>,
  fromWire: (w: W) => T,
): PayloadCodec<T> {
  const shape = WIRE_SHAPES[name]
  return {
    encode: (v) => msg.encode(toWire(v)),
    decode: (b) => {
      checkWire(b, schema)
      const w = msg.decode(b)
      checkShape(w, shape, name)
      return fromWire(w)
    },
  }
}

const enc = new TextEncoder()
const dec = new TextDecoder('utf-8', { fatal: true })
/** A signed document on the wire: its canonical JSON, the bytes its signature covers. */
export const docToBytes = (doc: unknown): Uint8Array<ArrayBuffer> => enc.encode(canonicalJson(doc))
export const docFromBytes = <T>(bytes: Uint8Array, as: (v: unknown) => T): T =>
  as(JSON.parse(dec.decode(bytes)))

export function need<T>(v: T | undefined, what: string): T {
  if (v === undefined) throw new Error(`${what} is missing`)
  return v
}
export const resources = (r: P.Resources): Resources => ({
  cpu: r.cpu,
  memoryBytes: r.memoryBytes,
  diskBytes: r.diskBytes,
  gpus: r.gpus,
})

/** An optional approval credential: canonical JSON bytes on the wire. */
export const approvalTo = (a: ApprovalCredential | undefined) =>
  a === undefined ? {} : { approval: docToBytes(a) }
export const approvalFrom = (b: Uint8Array | undefined) =>
  b === undefined ? {} : { approval: docFromBytes(b, asApproval) }

/** A repeated field decodes to [] when absent: a result's members are absent for one container. */
export const podOf = <T>(members: T[] | undefined) =>
  members !== undefined && members.length > 0 ? { members } : {}

/** Why a payload was refused at decode: the label of `dms_payloads_refused_total`. */
export type PayloadRefusal = 'too_long' | 'bad_shape' | 'bad_wire' | 'bad_json' | 'bad_payload'

export function refusalOf(err: unknown): PayloadRefusal {
  if (err instanceof DocumentShapeError) return err.reason
  if (err instanceof WireFormatError) return 'bad_wire'
  if (err instanceof SyntaxError || err instanceof TypeError) return 'bad_json'
  return 'bad_payload'
}
