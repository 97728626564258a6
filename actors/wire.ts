/**
 * A strict pass over protobuf wire bytes before the generated decoder sees them. protons decodes by
 * field number alone: a field sent with another wire type (a string where a uint64 belongs) is
 * silently misread. This walk refuses any field whose wire type differs from the schema, any
 * unknown field, and any truncated varint or length. Spec: specs/protocol.md ("Envelope").
 */
import type { WireSchema } from '../proto/wire-schema.js'
import { DmsError } from './errors.js'

export type { WireField, WireSchema, WireType } from '../proto/wire-schema.js'

export class WireFormatError extends DmsError {
  constructor(message: string) {
    super('BAD_WIRE', message)
  }
}

const MAX_DEPTH = 8

/** Throws WireFormatError unless `bytes` is well-formed for `schema`. */
export function checkWire(bytes: Uint8Array, schema: WireSchema): void {
  walk(bytes, 0, bytes.length, schema, 0)
}

function varint(buf: Uint8Array, pos: number, end: number): [value: number, next: number] {
  let value = 0
  let mul = 1
  for (let i = 0; i < 10; i++) {
    if (pos >= end) throw new WireFormatError('truncated varint')
    const b = buf[pos++]
    // Beyond 2^53 the exact value does not matter here (only lengths and tags are used).
    value += (b & 0x7f) * mul
    mul *= 128
    if ((b & 0x80) === 0) return [value, pos]
  }
  throw new WireFormatError('varint longer than 10 bytes')
}

function walk(buf: Uint8Array, pos: number, end: number, schema: WireSchema, depth: number): void {
  if (depth > MAX_DEPTH) throw new WireFormatError('messages nested too deeply')
  while (pos < end) {
    const [tag, afterTag] = varint(buf, pos, end)
    pos = afterTag
    const field = Math.floor(tag / 8)
    const wire = tag % 8
    const spec = schema[field]
    if (spec === undefined) throw new WireFormatError(`unknown field ${field}`)
    if (spec.wire !== wire && spec.alt !== wire)
      throw new WireFormatError(`field ${field} has wire type ${wire}, expected ${spec.wire}`)
    switch (wire) {
      case 0:
        pos = varint(buf, pos, end)[1]
        break
      case 1:
        pos += 8
        break
      case 5:
        pos += 4
        break
      case 2: {
        const [len, start] = varint(buf, pos, end)
        if (len > end - start) throw new WireFormatError(`field ${field} runs past the end`)
        if (spec.message !== undefined && spec.wire === 2)
          walk(buf, start, start + len, spec.message, depth + 1)
        pos = start + len
        break
      }
    }
    if (pos > end) throw new WireFormatError(`field ${field} runs past the end`)
  }
}
