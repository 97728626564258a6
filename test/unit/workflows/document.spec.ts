import assert from 'node:assert/strict'
import { InvalidWorkflowError, parseWorkflow } from '../../../dms/workflows/document.js'

const job = (cmd = 'true') => ({
  image: 'dms-test:1',
  command: ['sh', '-c', cmd],
  resources: { cpu: 0.5, memory: '64MiB' },
  maxDuration: 60,
  maxPrice: 100,
})
const refused = (doc: unknown, field: string, msg: RegExp, maxTasks?: number) =>
  assert.throws(
    () => parseWorkflow(doc, { maxTasks }),
    (err: unknown) => {
      assert.ok(err instanceof InvalidWorkflowError, String(err))
      assert.equal(err.field, field)
      assert.equal(err.code, 'INVALID_WORKFLOW')
      assert.match(err.message, msg)
      return true
    },
  )

describe('workflow document', () => {
  it('a diamond parses: fromTask implies runAfter, `as` defaults to the path or the task name', () => {
    const wf = parseWorkflow({
      name: 'diamond',
      tasks: [
        { name: 'A', job: job(), outputs: ['a.txt'] },
        { name: 'B', job: job(), from: [{ fromTask: 'A', path: 'a.txt' }] },
        { name: 'C', job: job(), runAfter: ['A'] },
        { name: 'D', job: job(), from: [{ fromTask: 'B' }, { fromTask: 'C', path: 'c.txt', as: 'c/c.txt' }] },
      ],
    })
    assert.deepEqual(
      wf.tasks.map((t) => [t.name, t.after]),
      [
        ['A', []],
        ['B', ['A']],
        ['C', ['A']],
        ['D', ['B', 'C']],
      ],
    )
    assert.deepEqual(wf.tasks[3].from, [
      { fromTask: 'B', as: 'B' },
      { fromTask: 'C', path: 'c.txt', as: 'c/c.txt' },
    ])
    assert.equal(wf.tasks[0].job.resources.memoryBytes, 64 * 1024 * 1024)
  })

  it('refuses unknown names, self-references, duplicates and cycles with a field path', () => {
    refused({ tasks: [{ name: 'A', job: job(), runAfter: ['X'] }] }, 'tasks.0.runAfter.0', /no task named X/)
    refused(
      { tasks: [{ name: 'A', job: job(), from: [{ fromTask: 'A' }] }] },
      'tasks.0.from.0.fromTask',
      /itself/,
    )
    refused(
      {
        tasks: [
          { name: 'A', job: job() },
          { name: 'A', job: job() },
        ],
      },
      'tasks.1.name',
      /named twice/,
    )
    refused(
      {
        tasks: [
          { name: 'A', job: job(), runAfter: ['C'] },
          { name: 'B', job: job(), runAfter: ['A'] },
          { name: 'C', job: job(), from: [{ fromTask: 'B' }] },
        ],
      },
      'tasks.0.runAfter',
      /cycle A -> C -> B -> A|cycle/,
    )
    refused({ tasks: [{ name: 'A', job: job(), pods: 'x' }] }, 'tasks.0.pods', /unknown field/)
  })

  it('refuses a file the upstream declares it does not write, and a path that cannot be an output', () => {
    refused(
      {
        tasks: [
          { name: 'A', job: job(), outputs: ['a.txt'] },
          { name: 'B', job: job(), from: [{ fromTask: 'A', path: 'b.txt' }] },
        ],
      },
      'tasks.1.from.0.path',
      /A declares outputs a.txt, not b.txt/,
    )
    refused(
      {
        tasks: [
          { name: 'A', job: job() },
          { name: 'B', job: job(), from: [{ fromTask: 'A', path: '../x' }] },
        ],
      },
      'tasks.1.from.0.path',
      /must match pattern/,
    )
  })

  it("refuses a task whose job is a pod (members), and names a bad member's field", () => {
    const member = (name: string) => ({
      name,
      image: 'dms-test:1',
      command: ['true'],
      cpu: 0.5,
      memory: '32MiB',
    })
    const pod = { members: [member('a'), member('b')], maxDuration: 60, maxPrice: 100 }
    refused(
      { tasks: [{ name: 'A', job: pod }] },
      'tasks.0.job.members',
      /one container: give tasks the same `pod` to run them together/,
    )
    refused(
      { tasks: [{ name: 'A', job: { ...pod, members: [member('a'), { ...member('b'), image: 'a//b' }] } }] },
      'tasks.0.job.members.1.image',
      /./,
    )
  })

  it('refuses two inputs on one path, a bad job spec by its field, and more tasks than allowed', () => {
    refused(
      {
        tasks: [
          { name: 'A', job: job() },
          {
            name: 'B',
            job: { ...job(), inputs: [{ path: 'x', content: '1' }] },
            from: [{ fromTask: 'A', path: 'o', as: 'x' }],
          },
        ],
      },
      'tasks.1.from.0.as',
      /used by another input/,
    )
    refused(
      { tasks: [{ name: 'A', job: { ...job(), resources: { cpu: 0.5, memory: '1MiB' } } }] },
      'tasks.0.job.resources.memory',
      /at least 6MiB/,
    )
    refused(
      {
        tasks: [
          { name: 'A', job: job() },
          { name: 'B', job: job() },
        ],
      },
      'tasks',
      /at most 1/,
      1,
    )
    refused({ tasks: [] }, 'tasks', /fewer than 1/)
  })
})
