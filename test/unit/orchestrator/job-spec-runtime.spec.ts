/**
 * A job that runs a runtime the provider offers (`runtime`, specs/job-spec.md "Runtimes") instead
 * of an image: checked and bounded before anything is contracted, named `runtime:<path>` as bids
 * and contracts name it, its workload's artifact a runtime, and posted again as it was posted.
 */
import assert from 'node:assert/strict'
import { InvalidJobSpecError, parseJobSpec } from '../../../dms/orchestrator/job-spec.js'
import { postedSpecOf } from '../../../dms/orchestrator/job-spec-posted.js'
import { workloadOfJob } from '../../../dms/orchestrator/job-workload.js'
import { workloadProblem } from '../../../dms/workload/check.js'
import { parseWorkflow } from '../../../dms/workflows/document.js'

const now = Date.UTC(2026, 10, 28, 10)
const valid = (more: Record<string, unknown> = {}) => ({
  runtime: '/usr/bin/python3',
  command: ['/usr/bin/python3', '-c', 'print(1)'],
  resources: { cpu: 0.5, memory: '64MiB' },
  maxDuration: 60,
  maxPrice: 100,
  ...more,
})

function refused(input: unknown, field: string, problem: RegExp): void {
  assert.throws(
    () => parseJobSpec(input, now),
    (err: unknown) => {
      assert.ok(err instanceof InvalidJobSpecError, String(err))
      assert.equal(err.field, field, err.message)
      assert.match(err.message, problem)
      return true
    },
  )
}

describe('job spec: a runtime instead of an image', () => {
  it('is named runtime:<path>, runs as a runtime artifact, and posts back as it was posted', () => {
    const spec = parseJobSpec(valid(), now)
    assert.equal(spec.image, 'runtime:/usr/bin/python3')
    assert.deepEqual(workloadOfJob(spec).members[0].artifact, { kind: 'runtime', path: '/usr/bin/python3' })
    assert.equal(workloadProblem(workloadOfJob(spec)), undefined)
    const posted = postedSpecOf(spec)
    assert.equal(posted.runtime, '/usr/bin/python3')
    assert.equal(posted.image, undefined)
    assert.deepEqual(parseJobSpec(posted, now), spec)
  })

  it('refuses both image and runtime, neither, a path that is not plain, and a command that runs another program', () => {
    refused(valid({ image: 'alpine:3' }), 'runtime', /must not be given with image/)
    const { runtime: _r, ...neither } = valid()
    refused(neither, 'image', /is required \(or runtime\)/)
    for (const bad of [
      'python3',
      '/usr/../bin/sh',
      '/usr/bin/',
      '/bin/$(x)',
      '/' + 'a'.repeat(300),
      '/.hidden/x',
    ])
      refused(valid({ runtime: bad }), 'runtime', /.+/)
    refused(valid({ command: ['/bin/sh', '-c', 'x'] }), 'command.0', /runtime's path \/usr\/bin\/python3/)
  })

  it('refuses a runtime beside members: a pod is containers', () => {
    const member = { name: 'a', image: 'alpine:3', command: ['true'], cpu: 0.5, memory: '64MiB' }
    refused(
      { members: [member, { ...member, name: 'b' }], runtime: '/bin/sh', maxDuration: 60, maxPrice: 1 },
      'runtime',
      /must not be given with members/,
    )
  })

  it('a workflow takes runtime tasks, but not in a pod', () => {
    const task = (name: string, pod?: string) => ({
      name,
      job: valid({ runtime: '/bin/sh', command: ['/bin/sh', '-c', ':'] }),
      ...(pod !== undefined ? { pod } : {}),
    })
    assert.equal(parseWorkflow({ tasks: [task('a'), task('b')] }).tasks.length, 2)
    assert.throws(
      () => parseWorkflow({ tasks: [task('a', 'p'), task('b', 'p')] }),
      /a runtime runs alone on the process engine/,
    )
  })
})

describe('workload check: a runtime runs as its own program', () => {
  it("refuses a runtime member whose command does not start with the runtime's path", () => {
    const w = {
      members: [
        {
          name: 'main',
          artifact: { kind: 'runtime', path: '/bin/sh' },
          command: ['/usr/bin/perl', '-e', '1'],
          env: {},
          network: 'none',
          resources: { cpu: 1, memoryBytes: 64 * 1024 * 1024 },
        },
      ],
    }
    assert.deepEqual(workloadProblem(w), {
      field: 'members.0.command.0',
      problem: "must be the runtime's path /bin/sh",
    })
  })
})
