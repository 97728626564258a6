/**
 * A pod's result and logs at the requester (specs/job-spec.md, "Pods"): a result whose members are
 * not the pod's is malformed; live output is kept and read member by member; the provider forwards
 * each member's output with its name.
 */
import assert from 'node:assert/strict'
import { ManualClock } from '../../../actors/clock.js'
import { LogForwarder } from '../../../dms/blobs/transfer.js'
import { JobSession } from '../../../dms/orchestrator/session.js'
import { membersProblem } from '../../../dms/orchestrator/steps/verify.js'
import type { JobLog, JobResult, MemberOutcome } from '../../../dms/protocol/messages.js'

const outcome = (name: string, status: MemberOutcome['status'] = 'completed'): MemberOutcome => ({
  name,
  status,
  exitCode: status === 'completed' ? 0 : 1,
  stdout: '',
  stderr: '',
  truncated: false,
})
const result = (status: string, members?: MemberOutcome[]) =>
  ({
    receipt: { receipt: { status } },
    ...(members !== undefined ? { members } : {}),
  }) as unknown as JobResult
const spec = [{ name: 'a' }, { name: 'b' }]

describe('orchestrator: a pod result and its logs', () => {
  it("refuses a result whose members are not the pod's, or completed while a member was not", () => {
    assert.equal(membersProblem(spec, result('completed', [outcome('a'), outcome('b')])), undefined)
    assert.equal(
      membersProblem(spec, result('failed', [outcome('a', 'failed'), outcome('b', 'cancelled')])),
      undefined,
    )
    assert.match(membersProblem(spec, result('completed')) ?? '', /not the pod's \(a, b\)/)
    assert.match(
      membersProblem(spec, result('completed', [outcome('b'), outcome('a')])) ?? '',
      /not the pod's/,
    )
    assert.match(membersProblem(spec, result('completed', [outcome('a')])) ?? '', /not the pod's/)
    assert.match(
      membersProblem(spec, result('completed', [outcome('a'), outcome('b', 'failed')])) ?? '',
      /completed while a member did not/,
    )
    assert.equal(membersProblem(undefined, result('completed')), undefined)
    assert.match(membersProblem(undefined, result('completed', [outcome('a')])) ?? '', /one container/)
  })

  it('keeps live output member by member', () => {
    const s = new JobSession(new ManualClock())
    const log = (seq: number, data: string, member?: string): JobLog => ({
      jobId: 'j',
      allocationId: 'x',
      stream: 'stdout',
      seq,
      data,
      ...(member !== undefined ? { member } : {}),
    })
    s.addLog(log(0, 'a1 ', 'a'))
    s.addLog(log(1, 'b1 ', 'b'))
    s.addLog(log(2, 'a2', 'a'))
    assert.equal(s.logs('a').stdout, 'a1 a2')
    assert.equal(s.logs('b').stdout, 'b1 ')
    assert.equal(s.logs().stdout, '')
  })

  it("forwards each member's output with its name, in order", () => {
    const clock = new ManualClock()
    const sent: JobLog[] = []
    const f = new LogForwarder((l) => Promise.resolve(void sent.push(l)), clock, {
      jobId: 'j',
      allocationId: 'x',
    })
    f.push('stdout', 'hello ', 'a')
    f.push('stdout', 'from b', 'b')
    f.push('stderr', 'oops', 'a')
    f.push('stdout', 'world', 'a')
    f.push('stdout', 'single')
    f.flush()
    assert.deepEqual(
      sent.map((l) => [l.seq, l.member, l.stream, l.data]),
      [
        [0, 'a', 'stdout', 'hello world'],
        [1, 'b', 'stdout', 'from b'],
        [2, 'a', 'stderr', 'oops'],
        [3, undefined, 'stdout', 'single'],
      ],
    )
    assert.equal('member' in sent[3], false)
  })
})
