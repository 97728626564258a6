import assert from 'node:assert/strict'
import { createOptions, validateSpec } from '../../../dms/executor/docker/container-config.js'
import { validatePod } from '../../../dms/executor/docker/pod-config.js'
import { causeOf, memberResults, podUsage, type MemberEnd } from '../../../dms/executor/docker/pod-result.js'
import type { Ended } from '../../../dms/executor/docker/supervise.js'
import type { ExecutionSpec, WorkloadMember } from '../../../dms/executor/executor.js'
import { member, type ContainerInit } from '../../helpers/workload.js'

const MiB = 1024 * 1024
const m = (name: string, more: Partial<ContainerInit> = {}): WorkloadMember =>
  member(name, { image: 'dms-test:1', command: ['true'], cpu: 0.5, memoryBytes: 16 * MiB, ...more })
const pod = (members: WorkloadMember[], more: Partial<ExecutionSpec> = {}): ExecutionSpec => ({
  jobId: 'j1',
  allocationId: 'a1',
  workload: { members },
  timeoutSeconds: 10,
  ...more,
})
/** The spec checked as the executor checks a pod before anything is created. */
const check = (s: ExecutionSpec) => {
  validateSpec(s)
  return validatePod(s)
}
const ended = (exitCode: number, more: Partial<Ended> = {}): Ended => ({
  exitCode,
  stopRequested: undefined,
  killed: false,
  oomKilled: false,
  usage: { wallSeconds: 2, cpuSeconds: 1, peakMemoryBytes: 10 },
  stdout: '',
  stderr: '',
  truncated: false,
  ...more,
})

describe('pods in the executor', function () {
  describe('validatePod', function () {
    it('accepts 2..8 uniquely named members', function () {
      assert.equal(check(pod([m('a'), m('b', { cpu: 0.25 })])).length, 2)
      // Member names are task names (specs/job-spec.md, "Pods").
      assert.equal(check(pod([m('Stage.1'), m('x'.repeat(64))])).length, 2)
    })

    it('refuses more than 8 members', function () {
      const nine = Array.from({ length: 9 }, (_, i) => m(`m${i}`))
      assert.throws(() => check(pod(nine)), { field: 'workload.members' })
    })

    it('names the member and field of a bad member', function () {
      assert.throws(() => check(pod([m('a'), m('-a')])), { field: 'workload.members.1.name' })
      assert.throws(() => check(pod([m('a'), m('.pod')])), { field: 'workload.members.1.name' })
      assert.throws(() => check(pod([m('a'), m('a')])), { field: 'workload.members.1.name' })
      assert.throws(() => check(pod([m('a', { image: 'bad image' }), m('b')])), {
        field: 'workload.members.0.artifact.ref',
      })
      assert.throws(() => check(pod([m('a'), m('b', { command: [] })])), {
        field: 'workload.members.1.command',
      })
      assert.throws(() => check(pod([m('a'), m('b', { memoryBytes: 1 })])), {
        field: 'workload.members.1.resources.memoryBytes',
      })
    })

    it('refuses GPUs in a pod', function () {
      assert.throws(() => check(pod([m('a'), m('b', { gpus: 1 })])), {
        field: 'workload.members.1.resources.gpus',
      })
    })
  })

  it("runs each member with its own program, share and network, and the pod's limits", function () {
    const s = pod([m('a', { network: true, env: { X: '1' } }), m('b')], { diskBytes: 8 * MiB })
    const settings = {
      user: '65534:65534',
      labelPrefix: 'dms',
      owner: 'p',
      outputsDir: '/w/a1/outputs/a',
      maxLogBytes: MiB,
    }
    const a = createOptions(s, s.workload.members[0], { ...settings, member: 'a' })
    assert.equal(a.HostConfig?.NetworkMode, 'bridge')
    assert.deepEqual(a.Env, ['X=1'])
    const opts = createOptions(s, s.workload.members[1], {
      user: '65534:65534',
      labelPrefix: 'dms',
      owner: 'p',
      outputsDir: '/w/a1/outputs/b',
      maxLogBytes: MiB,
      member: 'b',
      podDir: '/w/a1/outputs/.pod',
    })
    assert.equal(opts.name, 'dms-a1-b')
    assert.equal(opts.Labels?.['dms.member'], 'b')
    assert.equal(opts.HostConfig?.NetworkMode, 'none')
    assert.equal(opts.HostConfig?.Memory, 16 * MiB)
    assert.deepEqual(
      opts.HostConfig?.Mounts?.map((x) => [x.Source, x.Target, x.ReadOnly]),
      [
        ['/w/a1/outputs/b', '/outputs', false],
        ['/w/a1/outputs/.pod', '/pod', false],
      ],
    )
  })

  describe('the allocation from its members', function () {
    it('completes only when every member completed', function () {
      const ends: MemberEnd[] = [
        { name: 'a', ended: ended(0) },
        { name: 'b', ended: ended(0) },
      ]
      assert.equal(causeOf(memberResults(ends, 10), ends), undefined)
    })

    it('blames the member that failed by itself, not those stopped because of it', function () {
      const ends: MemberEnd[] = [
        { name: 'a', ended: ended(137, { stopRequested: 'pod', killed: true }) },
        { name: 'b', ended: ended(3) },
      ]
      const members = memberResults(ends, 10)
      assert.deepEqual(
        members.map((x) => [x.status, x.reason]),
        [
          ['cancelled', 'stopped: another member of the pod did not complete'],
          ['failed', 'exit code 3'],
        ],
      )
      assert.equal(causeOf(members, ends)?.name, 'b')
    })

    it('fails a member lost across a restart', function () {
      const ends: MemberEnd[] = [
        { name: 'a', lost: 'not started before the provider restarted' },
        { name: 'b', ended: ended(137, { stopRequested: 'pod', killed: true }) },
      ]
      const cause = causeOf(memberResults(ends, 10), ends)
      assert.deepEqual([cause?.name, cause?.status, cause?.exitCode], ['a', 'failed', -1])
    })

    it('takes the longest wall time and adds up cpu and memory peaks', function () {
      const ends: MemberEnd[] = [
        { name: 'a', ended: ended(0, { usage: { wallSeconds: 5, cpuSeconds: 2, peakMemoryBytes: 100 } }) },
        { name: 'b', ended: ended(0, { usage: { wallSeconds: 3, cpuSeconds: 1, peakMemoryBytes: 50 } }) },
      ]
      assert.deepEqual(podUsage(memberResults(ends, 10)), {
        wallSeconds: 5,
        cpuSeconds: 3,
        peakMemoryBytes: 150,
      })
    })
  })
})
