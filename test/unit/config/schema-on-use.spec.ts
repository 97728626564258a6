/**
 * Schema checks compiled at their first use (dms/schema.ts): nothing is compiled before,
 * the compiled check is reused, and a fastify validator reports its errors where fastify reads them.
 */
import assert from 'node:assert/strict'
import { Ajv } from 'ajv'
import { compileOnUse, validatorOnUse } from '../../../dms/schema.js'

// A schema ajv refuses to compile: compiling it is visible as a throw.
const broken = { type: 'object', properties: { a: { type: 'no-such-type' } } }
const schema = {
  type: 'object',
  properties: { a: { type: 'number' } },
  required: ['a'],
  additionalProperties: false,
}

describe('schema checks compiled on use (dms/schema.ts)', () => {
  it('compiles at the first call, not before, and reuses the compiled check', () => {
    const never = compileOnUse(broken, { strict: true })
    assert.throws(() => never(), /no-such-type|type/)
    const check = compileOnUse<{ a: number }>(schema, { strict: true })
    const v = check()
    assert.equal(check(), v)
    assert.equal(v({ a: 1 }), true)
    assert.equal(v({ a: 'x' }), false)
  })

  it('a weakly kept check still answers while it is held', () => {
    const check = compileOnUse(schema, { strict: true, allErrors: true }, 'weak')
    const v = check()
    assert.equal(check(), v)
    assert.equal(v({}), false)
    assert.equal(v.errors?.[0]?.keyword, 'required')
  })

  it('a fastify validator compiles at its first request and exposes the errors of a failed check', () => {
    const ajv = new Ajv({ strict: true })
    const lazyBroken = validatorOnUse(ajv, broken)
    assert.throws(() => lazyBroken({}), /no-such-type|type/)
    const validator = validatorOnUse(ajv, schema)
    assert.equal(validator({ a: 2 }), true)
    assert.equal(validator({ a: 2, b: 3 }), false)
    assert.equal(validator.errors?.[0]?.keyword, 'additionalProperties')
    assert.equal(validator({ a: 2 }), true)
    assert.equal(validator.errors, null)
  })
})
