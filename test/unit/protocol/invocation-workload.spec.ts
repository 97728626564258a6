/**
 * The invocation carries the workload whole (specs/protocol.md, "Invocation"): bounded and checked
 * by the one workload check at decode, required, and an invocation of protocol 1 is refused.
 */
import assert from 'node:assert/strict'
import { W, dmsCodecs } from '../../../dms/protocol/behaviours.js'
import type { PayloadRefusal } from '../../../dms/protocol/codecs.js'
import type { Invocation } from '../../../dms/protocol/messages.js'
import { makeContract, newParty } from '../../helpers/contracts.js'
import { container } from '../../helpers/workload.js'
import { workloadHash } from '../../../dms/workload/hash.js'

const contract = makeContract(newParty(), newParty(), newParty().peer)
const proof = {
  contractId: contract.terms.contractId,
  termsHash: 'h',
  escrowLocked: 1,
  issuedAt: 1,
  contractDb: contract.terms.contractDb,
  signature: 's',
}
const inv = (over: Partial<Parameters<typeof container>[0]> = {}): Invocation => ({
  contract,
  proof,
  inputs: [],
  workload: container({
    image: 'dms-test:1',
    command: ['a'],
    cpu: 1,
    memoryBytes: 64 * 1024 * 1024,
    ...over,
  }),
})

describe('protocol: the invocation carries the workload', () => {
  const refused: Array<[string, PayloadRefusal]> = []
  const codecs = dmsCodecs((behaviour, reason) => refused.push([behaviour, reason]))
  const roundTrip = (payload: unknown) => codecs.decode(W.invoke.name, codecs.encode(W.invoke.name, payload))
  beforeEach(() => (refused.length = 0))

  it('round-trips it whole, a bundle artifact and GPUs included', () => {
    const w = inv({ gpus: 2, env: { A: '1' } })
    w.workload.members[0].artifact = { kind: 'bundle', sha256: 'ab'.repeat(32) }
    assert.deepEqual((roundTrip(w) as Invocation).workload, w.workload)
  })

  it("keeps its hash across the wire, which the terms sign, and the terms' workloadHash bounded", () => {
    const w = inv({ env: { B: '2', A: '1' }, network: true })
    w.workload.members[0].workdir = '/work'
    const got = roundTrip(w) as Invocation
    assert.equal(workloadHash(got.workload), workloadHash(w.workload))
    assert.equal(got.contract.terms.workloadHash, contract.terms.workloadHash)
    const long = { ...contract, terms: { ...contract.terms, workloadHash: 'a'.repeat(129) } }
    assert.throws(() => roundTrip({ ...w, contract: long }), {
      reason: 'too_long',
      message: /workloadHash/,
    })
  })

  it('bounds every field of it at decode, naming the field', () => {
    assert.doesNotThrow(() => roundTrip(inv({ command: Array(256).fill('a') })))
    assert.throws(() => roundTrip(inv({ command: Array(257).fill('a') })), {
      reason: 'bad_shape',
      message: /^Invocation\.workload\.members\.0\.command /,
    })
    const env = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`K${i}`, 'v']))
    assert.doesNotThrow(() => roundTrip(inv({ env: env(256) })))
    assert.throws(() => roundTrip(inv({ env: env(257) })), {
      message: /^Invocation\.workload\.members\.0\.env /,
    })
    assert.throws(() => roundTrip(inv({ env: { 'A=B': '1' } })), {
      message: /^Invocation\.workload\.members\.0\.env\."A=B" the name must be/,
    })
    assert.throws(() => roundTrip(inv({ command: ['a\0'] })), {
      message: /command\.0 must not contain a NUL/,
    })
    assert.deepEqual(
      refused.map(([, reason]) => reason),
      ['bad_shape', 'bad_shape', 'bad_shape', 'bad_shape'],
    )
  })

  it('requires it: an invocation without one says the requester speaks an older protocol', () => {
    const { workload: _w, ...old } = inv()
    assert.throws(() => roundTrip(old), {
      reason: 'bad_shape',
      message: /Invocation\.workload is missing: the requester speaks an older protocol/,
    })
  })
})
