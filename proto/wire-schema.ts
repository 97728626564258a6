/**
 * The shape of the wire-type schemas generated next to each .proto (`<name>.wire.ts`, by
 * scripts/proto-wire.ts): for each field number of a message, the protobuf wire type it must
 * arrive in. actors/wire.ts walks bytes against them. Hand-written: proto/ imports nothing else.
 */

/** Wire types: 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32. */
export type WireType = 0 | 1 | 2 | 5

export interface WireField {
  wire: WireType
  /** Also accepted (a packed repeated number arrives length-delimited). */
  alt?: WireType
  /** For a length-delimited field holding a message: its schema, checked recursively. */
  message?: WireSchema
}

/** Field number -> expected wire type (and nested schema). */
export type WireSchema = Readonly<Record<number, WireField>>
