/**
 * Every string and list in every payload and signed document is bounded, and checked at decode,
 * before any behaviour sees it (dms/protocol/bounds.ts, dms/protocol/shapes.ts, dms/protocol/document-shapes.ts).
 */
import { container } from '../../helpers/workload.js'
import assert from 'node:assert/strict'
import { errorCodec } from '../../../actors/codec.js'
import { ManualClock } from '../../../actors/clock.js'
import { handleTooLarge, LIMITS } from '../../../dms/protocol/bounds.js'
import { JobSession } from '../../../dms/orchestrator/session.js'
import { makeContract, makeReceipt, newParty } from '../../helpers/contracts.js'
import { W } from '../../../dms/protocol/behaviours.js'
import { DOC_BYTES } from '../../../dms/protocol/shapes.js'
import { dmsCodecs } from '../../../dms/protocol/behaviours.js'
import type { PayloadRefusal } from '../../../dms/protocol/codecs.js'
import { plainNeeds } from '../../helpers/needs.js'

const requester = newParty()
const provider = newParty()
const contract = makeContract(requester, provider, newParty().peer)
const bid = contract.terms.bid
const receipt = makeReceipt(contract, provider)
const peers = (n: number) => Array.from({ length: n }, (_, i) => `12D3KooWPeer${i}`)

describe('bounds: every string and list a peer sends, checked at decode', () => {
  const refused: Array<[string, PayloadRefusal]> = []
  const codecs = dmsCodecs((behaviour, reason) => refused.push([behaviour, reason]))
  const roundTrip = (behaviour: string, payload: unknown) =>
    codecs.decode(behaviour, codecs.encode(behaviour, payload))
  beforeEach(() => (refused.length = 0))

  it('refuses a bid whose id is 3.5 MB, names the field, and counts it', () => {
    assert.throws(() => roundTrip(W.bid.name, { bid: { ...bid, bidId: 'x'.repeat(3_500_000) } }), {
      name: 'DocumentShapeError',
      reason: 'too_long',
      message: /^Bid\.bid has \d+ bytes, more than the 16384 allowed$/,
    })
    assert.deepEqual(refused, [[W.bid.name, 'too_long']])
    // Smaller than the document bound, the field's own bound still holds.
    assert.throws(() => roundTrip(W.bid.name, { bid: { ...bid, bidId: 'x'.repeat(129) } }), {
      reason: 'too_long',
      message: /^bid\.bidId has 129 characters, more than the 128 allowed$/,
    })
  })

  it('accepts every list at its bound and refuses one entry more', () => {
    const cases: Array<[string, (n: number) => unknown, number]> = [
      [
        W.bidRequest.name,
        (n) => ({
          jobId: 'j',
          workloadNeeds: plainNeeds('i', bid.resources),
          maxDurationSeconds: 1,
          maxPrice: 1,
          deadline: 1,
          exclude: peers(n),
        }),
        LIMITS.exclude,
      ],
      [
        W.decline.name,
        (n) => ({ jobId: 'j', provider: 'p', reasons: Array(n).fill('busy') }),
        LIMITS.reasons,
      ],
      [
        W.result.name,
        (n) => ({
          jobId: 'j',
          receipt,
          stdout: '',
          stderr: '',
          truncated: false,
          outputs: Array.from({ length: n }, (_, i) => ({ path: `f${i}`, sha256: 'ab'.repeat(32), size: 1 })),
        }),
        LIMITS.outputs,
      ],
      [
        W.invoke.name,
        (n) => ({
          contract,
          proof: proofOf(),
          workload: container({ image: 'dms-test:1', command: ['a'], cpu: 1, memoryBytes: 64 * 1024 * 1024 }),
          inputs: Array.from({ length: n }, (_, i) => ({ path: `in${i}`, sha256: 'ab'.repeat(32), size: 1 })),
        }),
        LIMITS.inputs,
      ],
    ]
    for (const [behaviour, make, max] of cases) {
      assert.doesNotThrow(() => roundTrip(behaviour, make(max)), `${behaviour} at ${max}`)
      assert.throws(
        () => roundTrip(behaviour, make(max + 1)),
        { reason: 'too_long' },
        `${behaviour} at ${max + 1}`,
      )
    }
    assert.equal(refused.length, cases.length)
  })

  it('bounds strings in messages and documents: state, log data, detail, receipt reason', () => {
    const update = { jobId: 'j', allocationId: 'a', state: 'running', at: 1 }
    assert.throws(
      () => roundTrip(W.update.name, { ...update, state: 's'.repeat(LIMITS.name + 1) }),
      /JobUpdate\.state/,
    )
    assert.throws(
      () => roundTrip(W.update.name, { ...update, detail: 'd'.repeat(LIMITS.text + 1) }),
      /JobUpdate\.detail/,
    )
    const log = { jobId: 'j', allocationId: 'a', stream: 'stdout', seq: 0 }
    assert.doesNotThrow(() => roundTrip(W.log.name, { ...log, data: 'x'.repeat(LIMITS.log) }))
    assert.throws(() => roundTrip(W.log.name, { ...log, data: 'x'.repeat(LIMITS.log + 1) }), /JobLog\.data/)
    const long = { ...receipt, receipt: { ...receipt.receipt, reason: 'r'.repeat(LIMITS.text + 1) } }
    assert.throws(
      () => roundTrip(W.settle.name, { contractId: 'c', receipt: long, verification: verificationOf() }),
      {
        message: /receipt\.receipt\.reason has 4097 characters/,
      },
    )
  })

  it('refuses a signed document with a field the model does not have', () => {
    assert.throws(() => roundTrip(W.bid.name, { bid: { ...bid, fit: 1 } }), {
      reason: 'bad_shape',
      message: /bid\.fit is not a known field/,
    })
    assert.throws(
      () => roundTrip(W.contractVerify.name, { contract: { ...contract, note: 'x' } }),
      /contract\.note/,
    )
  })

  it("decodes contract terms without the bid's copies (this version) and with them (an earlier version), bounding each copy", () => {
    const earlier = makeContract(requester, provider, newParty().peer, { copies: true })
    assert.ok(!('image' in contract.terms) && 'image' in earlier.terms)
    for (const c of [contract, earlier])
      assert.deepEqual(roundTrip(W.contractSign.name, { contract: c }), { contract: c })
    const copied = (over: object) => ({ contract: { ...earlier, terms: { ...earlier.terms, ...over } } })
    assert.throws(() => roundTrip(W.contractSign.name, copied({ image: 'i'.repeat(LIMITS.image + 1) })), {
      reason: 'too_long',
      message: /terms\.image/,
    })
    assert.throws(() => roundTrip(W.contractSign.name, copied({ maxDurationSeconds: '60' })), {
      reason: 'bad_shape',
      message: /terms\.maxDurationSeconds/,
    })
    assert.throws(() => roundTrip(W.contractSign.name, copied({ resources: { cpu: 1, extra: 1 } })), {
      reason: 'bad_shape',
      message: /terms\.resources/,
    })
  })

  it('bounds a document in bytes before parsing it', () => {
    const huge = { ...contract, terms: { ...contract.terms, image: 'i'.repeat(DOC_BYTES.contract) } }
    assert.throws(() => roundTrip(W.contractSign.name, { contract: huge }), {
      message: /^ContractRequest\.contract has \d+ bytes, more than the 65536 allowed$/,
    })
  })

  it('bounds error replies: code, message and data', () => {
    const back = (code: string, message: string) =>
      errorCodec.decode(
        // Encoded by hand: our own encoder clips a long message.
        new Uint8Array([...field(1, code), ...field(2, message)]),
      )
    assert.deepEqual(back('NOPE', 'short'), { code: 'NOPE', message: 'short', data: undefined })
    assert.throws(() => back('C'.repeat(65), 'm'), /error code over 64/)
    assert.throws(() => back('NOPE', 'm'.repeat(4097)), /error message over 4096/)
    assert.equal(
      errorCodec.decode(errorCodec.encode({ code: 'X', message: 'm'.repeat(10_000) })).message.length,
      4096,
    )
  })
})

describe('bounds on what is kept from a peer beyond its payload', () => {
  it('a sender handle with an oversized inbox or address is not kept', () => {
    const addr = '/ip4/127.0.0.1/tcp/4001'
    assert.equal(handleTooLarge({ inbox: 'job/x', addrs: [addr] }), false)
    assert.equal(handleTooLarge({ inbox: 'i'.repeat(LIMITS.inbox + 1), addrs: [] }), true)
    assert.equal(handleTooLarge({ inbox: 'job/x', addrs: [addr, 'a'.repeat(LIMITS.addr + 1)] }), true)
  })

  it('a job keeps at most LIMITS.updates progress updates, whatever its provider sends', () => {
    const session = new JobSession(new ManualClock())
    for (let i = 0; i < LIMITS.updates + 50; i++)
      session.addUpdate({ jobId: 'j', allocationId: 'a', state: 'running', at: i }, i)
    assert.equal(session.updates.length, LIMITS.updates)
    assert.equal(session.lastSeen, LIMITS.updates + 49, 'every update still counts as a sign of life')
  })
})

function proofOf() {
  return {
    contractId: 'c',
    termsHash: 'ab'.repeat(32),
    escrowLocked: 0,
    issuedAt: 1,
    contractDb: 'cdb',
    signature: 's',
  }
}

function verificationOf() {
  return {
    verification: {
      contractId: 'c',
      receiptHash: 'ab'.repeat(32),
      verified: true,
      outputsHashOk: true,
      receiptSignatureOk: true,
      verifiedAt: 1,
    },
    signature: 's',
  }
}

/** A length-delimited protobuf field (string), for hand-made payloads. */
function field(n: number, s: string): number[] {
  const bytes = [...new TextEncoder().encode(s)]
  const len: number[] = []
  for (let v = bytes.length; ; v >>>= 7) {
    if (v < 0x80) {
      len.push(v)
      break
    }
    len.push((v & 0x7f) | 0x80)
  }
  return [(n << 3) | 2, ...len, ...bytes]
}
