/**
 * The job spec's container fields are the workload member's, declared once
 * (dms/workload/workload.ts, `memberRunFields`): a plain job's, a pod member's and a workflow
 * task's run fields have the member's bounds and reach its workload member by their names, and a
 * spec read back keeps them (specs/job-spec.md, "Run fields").
 */
import assert from 'node:assert/strict'
import { InvalidJobSpecError, jobSpecSchema, parseJobSpec } from '../../../dms/orchestrator/job-spec.js'
import { podMemberSchema } from '../../../dms/orchestrator/job-spec-members.js'
import { postedSpecOf } from '../../../dms/orchestrator/job-spec-posted.js'
import { workloadOfJob } from '../../../dms/orchestrator/job-workload.js'
import { workloadProblem } from '../../../dms/workload/check.js'
import { RUN_FIELDS, workloadMemberSchema } from '../../../dms/workload/workload.js'
import { parseWorkflow } from '../../../dms/workflows/document.js'
import { podJobSpec } from '../../../dms/workflows/pod-job.js'

const container = (more: Record<string, unknown> = {}) => ({
  image: 'dms-test:1',
  command: ['pwd'],
  resources: { cpu: 0.5, memory: '64MiB' },
  maxDuration: 60,
  maxPrice: 1000,
  ...more,
})
const member = (name: string, more: Record<string, unknown> = {}) => ({
  name,
  image: 'dms-test:1',
  command: ['pwd'],
  cpu: 0.5,
  memory: '16MiB',
  ...more,
})
const pod = (members: unknown[]) => ({ maxDuration: 60, maxPrice: 1000, members })

function refusedField(input: unknown): string {
  try {
    parseJobSpec(input)
  } catch (err) {
    assert.ok(err instanceof InvalidJobSpecError, String(err))
    return err.field
  }
  assert.fail(`${JSON.stringify(input).slice(0, 80)} was taken`)
}

// A schema as JSON: TypeBox's Optional is a symbol, which JSON leaves out.
const json = (schema: unknown) => JSON.stringify(schema)

describe('orchestrator: the job spec runs the workload member’s fields', () => {
  it('every run field of the member is a field of the job spec and of a pod member, with its bounds', () => {
    assert.ok(RUN_FIELDS.includes('workdir') && RUN_FIELDS.includes('command'))
    const props = jobSpecSchema.properties as Record<string, unknown>
    const memberProps = podMemberSchema.properties as Record<string, unknown>
    const own = workloadMemberSchema.properties as Record<string, unknown>
    for (const k of RUN_FIELDS) {
      assert.equal(json(props[k]), json(own[k]), `job spec ${k}`)
      assert.equal(json(memberProps[k]), json(own[k]), `pod member ${k}`)
    }
  })

  it("a plain job's workdir survives being read back and posted again (`dms job run -f` of `dms job status --json`)", () => {
    const spec = parseJobSpec(container({ workdir: '/srv', env: { A: 'b' } }))
    const again = parseJobSpec(postedSpecOf(spec))
    assert.deepEqual(again, spec)
    assert.equal(workloadOfJob(again).members[0].workdir, '/srv')
  })

  it("a pod member's workdir reaches its workload member, bounded as the member's", () => {
    const spec = parseJobSpec(pod([member('a', { workdir: '/pod' }), member('b')]))
    const w = workloadOfJob(spec)
    assert.equal(workloadProblem(w), undefined)
    assert.equal(w.members[0].workdir, '/pod')
    assert.equal('workdir' in w.members[1], false)
    assert.deepEqual(parseJobSpec(postedSpecOf(spec)), spec)
    // A hostile or careless poster: the member's own bounds, at the member's field.
    for (const bad of ['relative', '/a\0b', `/${'a'.repeat(4096)}`, ''])
      assert.equal(refusedField(pod([member('a'), member('b', { workdir: bad })])), 'members.1.workdir')
    assert.equal(refusedField(pod([member('a', { user: '0:0' }), member('b')])), 'members.0.user')
    assert.equal(
      refusedField(pod([member('a', { command: ['sh', 'x\0'] }), member('b')])),
      'members.0.command.1',
    )
  })

  it("a workflow pod's tasks keep their own workdir; the first task's is not the pod job's", () => {
    const task = (name: string, workdir?: string) => ({
      name,
      pod: 'p',
      job: container(workdir === undefined ? {} : { workdir }),
    })
    const wf = parseWorkflow({ tasks: [task('a', '/a'), task('b')] })
    const spec = podJobSpec(
      'p',
      wf.tasks.map((t) => ({ task: t, inputs: [] })),
    )
    assert.equal('workdir' in spec, false)
    const w = workloadOfJob(spec)
    assert.equal(workloadProblem(w), undefined)
    assert.deepEqual(
      w.members.map((m) => [m.name, m.workdir]),
      [
        ['a', '/a'],
        ['b', undefined],
      ],
    )
  })
})
