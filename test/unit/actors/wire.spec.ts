import assert from 'node:assert/strict'
import { checkWire, type WireSchema } from '../../../actors/wire.js'

const INNER: WireSchema = { 1: { wire: 0 } }
const SCHEMA: WireSchema = {
  1: { wire: 0 },
  2: { wire: 2, message: INNER },
  3: { wire: 0, alt: 2 }, // repeated number: unpacked or packed
  4: { wire: 1 },
  5: { wire: 5 },
}

describe('actors/wire (strict wire-type check)', () => {
  it('accepts well-formed bytes of every wire type, packed and unpacked repeated numbers', () => {
    checkWire(new Uint8Array([0x08, 0x96, 0x01]), SCHEMA) // 1: varint 150
    checkWire(new Uint8Array([0x12, 0x02, 0x08, 0x01]), SCHEMA) // 2: { 1: 1 }
    checkWire(new Uint8Array([0x18, 0x01, 0x18, 0x02]), SCHEMA) // 3: unpacked
    checkWire(new Uint8Array([0x1a, 0x02, 0x01, 0x02]), SCHEMA) // 3: packed
    checkWire(new Uint8Array([0x21, 1, 2, 3, 4, 5, 6, 7, 8, 0x2d, 1, 2, 3, 4]), SCHEMA)
    checkWire(new Uint8Array(0), SCHEMA)
  })

  it('refuses wrong wire types, unknown fields, truncation, and overlong varints', () => {
    const bad: Array<[number[], RegExp]> = [
      [[0x0a, 0x00], /field 1 has wire type 2, expected 0/],
      [[0x12, 0x02, 0x0a, 0x00], /field 1 has wire type 2, expected 0/], // inside field 2
      [[0x30, 0x01], /unknown field 6/],
      [[0x08], /truncated varint/],
      [[0x08, 0x80], /truncated varint/],
      [[0x12, 0x05, 0x08], /runs past the end/],
      [[0x21, 1, 2, 3], /runs past the end/],
      [[0x08, ...Array<number>(10).fill(0xff), 0x01], /longer than 10 bytes/],
    ]
    for (const [bytes, message] of bad)
      assert.throws(() => checkWire(new Uint8Array(bytes), SCHEMA), { name: 'WireFormatError', message })
  })

  it('refuses messages nested deeper than 8 levels', () => {
    const self: Record<number, { wire: 2; message: WireSchema }> = {}
    self[1] = { wire: 2, message: self }
    let bytes: number[] = []
    for (let i = 0; i < 12; i++) bytes = [0x0a, bytes.length, ...bytes]
    assert.throws(() => checkWire(new Uint8Array(bytes), self), /nested too deeply/)
  })
})
