/**
 * A pod on the wire (specs/protocol.md, "Pods"): the bid request's needs, the invocation's
 * workload, the result's `members` and a log piece's `member` round-trip, and are bounded at decode
 * (the needs' bounds: bid-request-needs.spec.ts).
 */
import assert from 'node:assert/strict'
import { W, dmsCodecs } from '../../../dms/protocol/behaviours.js'
import { LIMITS } from '../../../dms/protocol/bounds.js'
import type { BidRequest, Invocation, JobLog, JobResult } from '../../../dms/protocol/messages.js'
import { needsOf, type WorkloadNeeds } from '../../../dms/workload/needs.js'
import { member, type ContainerInit } from '../../helpers/workload.js'
import { makeContract, makeReceipt, newParty } from '../../helpers/contracts.js'

const requester = newParty()
const provider = newParty()
const contract = makeContract(requester, provider, newParty().peer)
const receipt = makeReceipt(contract, provider)

const request = (workloadNeeds: WorkloadNeeds): BidRequest => ({
  jobId: 'j',
  workloadNeeds,
  maxDurationSeconds: 60,
  maxPrice: 1,
  deadline: 1,
  exclude: [],
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

  it("round-trips a bid request's needs: a pod's members, or one container's", () => {
    const pod = needsOf({ members: [invoked('a'), invoked('B.2', { image: 'other:1', network: true })] })
    assert.deepEqual(roundTrip(W.bidRequest.name, request(pod)).workloadNeeds, pod)
    const one = needsOf({ members: [invoked('main', { gpus: 1 })] })
    assert.deepEqual(roundTrip(W.bidRequest.name, request(one)).workloadNeeds, one)
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

  it('refuses a member status it does not know, and a member log over its bound', () => {
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
