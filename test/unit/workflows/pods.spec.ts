/** Pods in the workflow document (specs/workflow.md, "Pods"): what parses, and every refusal by its field. */
import assert from 'node:assert/strict'
import { InvalidWorkflowError, parseWorkflow } from '../../../dms/workflows/document.js'

const job = (extra: Record<string, unknown> = {}) => ({
  image: 'dms-test:1',
  command: ['sh', '-c', 'true'],
  resources: { cpu: 0.5, memory: '64MiB' },
  maxDuration: 60,
  maxPrice: 100,
  ...extra,
})
const refused = (tasks: unknown[], field: string, msg: RegExp) =>
  assert.throws(
    () => parseWorkflow({ tasks }),
    (err: unknown) => {
      assert.ok(err instanceof InvalidWorkflowError, String(err))
      assert.equal(err.field, field)
      assert.match(err.message, msg)
      return true
    },
  )

describe('workflow document: pods', () => {
  it('a pod of two with an upstream and a dependant parses; each task keeps its pod', () => {
    const wf = parseWorkflow({
      tasks: [
        { name: 'up', job: job() },
        { name: 'a', job: job(), pod: 'p', runAfter: ['up'] },
        { name: 'b', job: job({ network: true }), pod: 'p', from: [{ fromTask: 'up' }] },
        { name: 'down', job: job(), from: [{ fromTask: 'a', path: 'x.txt' }] },
      ],
    })
    assert.deepEqual(
      wf.tasks.map((t) => [t.name, t.pod]),
      [
        ['up', undefined],
        ['a', 'p'],
        ['b', 'p'],
        ['down', undefined],
      ],
    )
  })

  it('refuses a pod of one task, and a pod of more than 8', () => {
    refused([{ name: 'a', job: job(), pod: 'p' }], 'tasks.0.pod', /pod p has one task: a pod is 2 to 8/)
    const nine = Array.from({ length: 9 }, (_, i) => ({ name: `t${i}`, job: job(), pod: 'p' }))
    refused(nine, 'tasks.8.pod', /pod p has 9 tasks: a pod is at most 8/)
    refused(
      [
        { name: 'a', job: job(), pod: 'bad name' },
        { name: 'b', job: job(), pod: 'bad name' },
      ],
      'tasks.0.pod',
      /must match pattern/,
    )
  })

  it('refuses runAfter and a fromTask input between two tasks of one pod', () => {
    refused(
      [
        { name: 'x', job: job() },
        { name: 'a', job: job(), pod: 'p' },
        { name: 'b', job: job(), pod: 'p', runAfter: ['x', 'a'] },
      ],
      'tasks.2.runAfter.1',
      /a and b are both in pod p: they run together/,
    )
    refused(
      [
        { name: 'a', job: job(), pod: 'p' },
        { name: 'b', job: job(), pod: 'p', runAfter: ['a'], from: [{ fromTask: 'a', path: 'o' }] },
      ],
      'tasks.1.from.0.fromTask',
      /a and b are both in pod p: its outputs do not exist while they run together/,
    )
  })

  it('refuses a pod that would wait for itself through a task outside it', () => {
    refused(
      [
        { name: 'a', job: job(), pod: 'p' },
        { name: 'c', job: job(), runAfter: ['a'] },
        { name: 'b', job: job(), pod: 'p', runAfter: ['c'] },
      ],
      'tasks.0.pod',
      /pod p would wait for itself: pod p -> c -> pod p/,
    )
  })

  it('refuses tasks that cannot be one job: a task with members, a GPU, job-level fields that differ, sums too big', () => {
    const members = [
      { name: 'm1', image: 'dms-test:1', command: ['true'], cpu: 0.5, memory: '64MiB' },
      { name: 'm2', image: 'dms-test:1', command: ['true'], cpu: 0.5, memory: '64MiB' },
    ]
    const { image: _i, command: _c, ...noContainer } = job()
    refused(
      [
        { name: 'a', job: job(), pod: 'p' },
        { name: 'b', job: { ...noContainer, resources: {}, members }, pod: 'p' },
      ],
      'tasks.1.job.members',
      /a workflow task is one container/,
    )
    refused(
      [
        { name: 'a', job: job(), pod: 'p' },
        { name: 'b', job: job({ resources: { cpu: 0.5, memory: '64MiB', gpu: 1 } }), pod: 'p' },
      ],
      'tasks.1.job.resources.gpu',
      /no GPU/,
    )
    for (const [extra, field] of [
      [{ maxDuration: 30 }, 'maxDuration'],
      [{ retries: 1 }, 'retries'],
      [{ retryPolicy: { attempts: 2, on: ['runFailed'] } }, 'retryPolicy'],
      [{ providers: { deny: ['x'] } }, 'providers'],
      [{ queueTimeout: 5 }, 'queueTimeout'],
      [{ startBy: '10m' }, 'startBy'],
    ] as const)
      refused(
        [
          { name: 'a', job: job(), pod: 'p' },
          { name: 'b', job: job(extra), pod: 'p' },
        ],
        `tasks.1.job.${field}`,
        new RegExp(`pod p run as one job: ${field} must be the same as a's`),
      )
    // The pod's job is checked by the job spec's own rules: its sums are bounded.
    refused(
      [
        { name: 'a', job: job({ resources: { cpu: 1000, memory: '64MiB' } }), pod: 'p' },
        { name: 'b', job: job({ resources: { cpu: 100, memory: '64MiB' } }), pod: 'p' },
      ],
      'tasks.0.pod',
      /pod p: members: cpu adds up to 1100, more than 1024/,
    )
    // A default and the same value given explicitly agree.
    parseWorkflow({
      tasks: [
        { name: 'a', job: job(), pod: 'p' },
        { name: 'b', job: job({ retries: 3 }), pod: 'p' },
      ],
    })
  })

  it('refuses two tasks of one pod landing different inputs on one path; the same input twice is one', () => {
    refused(
      [
        { name: 'a', job: job({ inputs: [{ path: 'cfg', content: '1' }] }), pod: 'p' },
        { name: 'b', job: job({ inputs: [{ path: 'cfg', content: '2' }] }), pod: 'p' },
      ],
      'tasks.1.job.inputs.0.path',
      /cfg: the tasks of pod p share \/inputs/,
    )
    refused(
      [
        { name: 'up', job: job() },
        { name: 'a', job: job(), pod: 'p', from: [{ fromTask: 'up', path: 'x' }] },
        { name: 'b', job: job(), pod: 'p', from: [{ fromTask: 'up', path: 'y', as: 'x' }] },
      ],
      'tasks.2.from.0.as',
      /x: the tasks of pod p share \/inputs/,
    )
    parseWorkflow({
      tasks: [
        { name: 'up', job: job() },
        {
          name: 'a',
          job: job({ inputs: [{ path: 'cfg', content: '1' }] }),
          pod: 'p',
          from: [{ fromTask: 'up', path: 'x' }],
        },
        {
          name: 'b',
          job: job({ inputs: [{ path: 'cfg', content: '1' }] }),
          pod: 'p',
          from: [{ fromTask: 'up', path: 'x' }],
        },
      ],
    })
  })
})
