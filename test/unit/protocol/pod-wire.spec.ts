/**
 * A pod on the wire (specs/protocol.md, "Pods"): the bid request's, invocation's and result's
 * `members` and a log piece's `member` round-trip, are absent for one container, and are bounded
 * at decode (at most 8 members, each field at its bound).
 */
import assert from 'node:assert/strict'
import { W, dmsCodecs } from '../../../dms/protocol/behaviours.js'
import { LIMITS } from '../../../dms/protocol/bounds.js'
import type { BidRequest, Invocation, JobLog, JobResult } from '../../../dms/protocol/messages.js'
import { member, type ContainerInit } from '../../helpers/workload.js'
import { makeContract, makeReceipt, newParty } from '../../helpers/contracts.js'

const requester = newParty()
const provider = newParty()
const contract = makeContract(requester, provider, newParty().peer)
const receipt = makeReceipt(contract, provider)

const request = (members?: BidRequest['members']): BidRequest => ({
  jobId: 'j',
  resources: contract.terms.bid.resources,
  image: 'dms-test:1',
  maxDurationSeconds: 60,
  maxPrice: 1,
  deadline: 1,
  exclude: [],
  ...(members !== undefined ? { members } : {}),
})
const invoked = (name: string, more: Partial<ContainerInit> = {}) =>
  member(name, {
    image: 'dms-test:1',
    command: ['sh', '-c', 'true'],
    env: { K: 'v' },
    cpu: 0.5,
    memoryBytes: 64 * 1024 * 1024,
    ...more,
  })
const outcome = (name: string) => ({
  name,
  status: 'completed' as const,
  exitCode: 0,
  stdout: `${name} out`,
  stderr: '',
  truncated: false,
})

describe('protocol: pods on the wire', () => {
  const codecs = dmsCodecs(() => {})
  const roundTrip = <T>(behaviour: string, payload: T): T =>
    codecs.decode(behaviour, codecs.encode(behaviour, payload)) as T

  it("round-trips a bid request's members, and leaves them absent for one container", () => {
    const members = [
      { name: 'a', image: 'dms-test:1' },
      { name: 'B.2', image: 'other:1', network: true },
    ]
    assert.deepEqual(roundTrip(W.bidRequest.name, request(members)).members, members)
    assert.equal('members' in roundTrip(W.bidRequest.name, request()), false)
  })

  it("round-trips an invocation's members (commands, env, shares) and a result's", () => {
    const inv = {
      contract,
      proof: {
        contractId: contract.terms.contractId,
        termsHash: 'h',
        escrowLocked: 1,
        issuedAt: 1,
        contractDb: contract.terms.contractDb,
        signature: 's',
      },
      inputs: [],
      workload: { members: [invoked('a'), invoked('b', { network: true, env: {} })] },
    } as unknown as Invocation
    assert.deepEqual(roundTrip(W.invoke.name, inv).workload, inv.workload)
    const result: JobResult = {
      jobId: contract.terms.jobId,
      receipt,
      stdout: '',
      stderr: '',
      truncated: false,
      outputs: [],
      members: [outcome('a'), { ...outcome('b'), status: 'failed', exitCode: -1, reason: 'exit code 3' }],
    }
    assert.deepEqual(roundTrip(W.result.name, result).members, result.members)
    assert.equal('members' in roundTrip(W.result.name, { ...result, members: undefined }), false)
  })

  it("round-trips a log piece's member, absent for one container", () => {
    const log: JobLog = { jobId: 'j', allocationId: 'a', stream: 'stdout', seq: 0, data: 'x', member: 'b' }
    assert.equal(roundTrip(W.log.name, log).member, 'b')
    assert.equal('member' in roundTrip(W.log.name, { ...log, member: undefined }), false)
  })

  it('refuses more than 8 members, an overlong member name or image, and a status it does not know', () => {
    const nine = Array.from({ length: 9 }, (_, i) => ({ name: `m${i}`, image: 'i' }))
    assert.throws(() => roundTrip(W.bidRequest.name, request(nine)), {
      reason: 'too_long',
      message: /^BidRequest\.members has 9 entries, more than the 8 allowed$/,
    })
    assert.throws(
      () => roundTrip(W.bidRequest.name, request([{ name: 'x'.repeat(LIMITS.name + 1), image: 'i' }])),
      { reason: 'too_long', message: /^BidRequest\.members\[0\]\.name has 65 characters/ },
    )
    assert.throws(
      () => roundTrip(W.bidRequest.name, request([{ name: 'a', image: 'i'.repeat(LIMITS.image + 1) }])),
      { reason: 'too_long', message: /^BidRequest\.members\[0\]\.image has 513 characters/ },
    )
    const result = {
      jobId: 'j',
      receipt,
      stdout: '',
      stderr: '',
      truncated: false,
      outputs: [],
      members: [{ ...outcome('a'), status: 'exploded' }],
    }
    assert.throws(() => roundTrip(W.result.name, result), {
      reason: 'bad_shape',
      message: /^JobResult\.members\[0\]\.status must be one of/,
    })
    const bigLog = { ...outcome('a'), stdout: 'x'.repeat(LIMITS.log + 1) }
    assert.throws(() => roundTrip(W.result.name, { ...result, members: [bigLog] }), { reason: 'too_long' })
  })
})
