/**
 * A pod job's spec (specs/job-spec.md, "Pods"): `members` instead of one container, each bounded
 * like a container's fields, the job's cpu and memory their sums, and every refusal naming the
 * field at fault.
 */
import assert from 'node:assert/strict'
import { InvalidJobSpecError, parseJobSpec } from '../../../dms/orchestrator/job-spec.js'
import { postedSpecOf } from '../../../dms/orchestrator/job-spec-posted.js'

const MiB = 1024 * 1024

const member = (name: string, more: Record<string, unknown> = {}) => ({
  name,
  image: 'dms-test:1',
  command: ['sh', '-c', `echo ${name}`],
  cpu: 0.25,
  memory: '32MiB',
  ...more,
})
const pod = (more: Record<string, unknown> = {}) => ({
  members: [member('a'), member('b', { network: true, env: { K: 'v' } })],
  maxDuration: 60,
  maxPrice: 1000,
  ...more,
})

function refused(input: unknown, field: string, problem?: RegExp): void {
  try {
    parseJobSpec(input)
  } catch (err) {
    assert.ok(err instanceof InvalidJobSpecError, String(err))
    assert.equal(err.field, field, err.message)
    assert.ok(err.message.startsWith(`${field}: `), err.message)
    if (problem) assert.match(err.message, problem)
    return
  }
  assert.fail(`expected a refusal on ${field}`)
}

describe('orchestrator/job-spec pods (members)', () => {
  it("takes 2..8 members: the job's cpu and memory are their sums, image the first member's", () => {
    const s = parseJobSpec(pod({ resources: { disk: '128MiB' } }))
    assert.deepEqual(s.members, [
      {
        name: 'a',
        image: 'dms-test:1',
        command: ['sh', '-c', 'echo a'],
        env: {},
        cpu: 0.25,
        memoryBytes: 32 * MiB,
      },
      {
        name: 'b',
        image: 'dms-test:1',
        command: ['sh', '-c', 'echo b'],
        env: { K: 'v' },
        network: true,
        cpu: 0.25,
        memoryBytes: 32 * MiB,
      },
    ])
    assert.deepEqual(s.resources, { cpu: 0.5, memoryBytes: 64 * MiB, diskBytes: 128 * MiB, gpus: 0 })
    assert.equal(s.image, 'dms-test:1')
    assert.deepEqual([s.command, s.env, s.network], [[], {}, undefined])
    // Task names are member names (a workflow's pod is its tasks).
    const named = parseJobSpec(pod({ members: [member('Stage.1'), member('stage_2-b')] }))
    assert.deepEqual(
      named.members?.map((m) => m.name),
      ['Stage.1', 'stage_2-b'],
    )
  })

  it('refuses a pod of one member or of more than 8', () => {
    refused(pod({ members: [member('a')] }), 'members', /fewer than 2/)
    const nine = Array.from({ length: 9 }, (_, i) => member(`m${i}`))
    refused(pod({ members: nine }), 'members', /more than 8/)
  })

  it('refuses a container field next to members: a spec is one or the other', () => {
    refused(pod({ image: 'dms-test:1' }), 'image', /must not be given with members/)
    refused(pod({ command: ['true'] }), 'command', /must not be given with members/)
    refused(pod({ env: {} }), 'env', /must not be given with members/)
    refused(pod({ network: true }), 'network', /must not be given with members/)
    refused(pod({ resources: { cpu: 1 } }), 'resources.cpu', /their sum/)
    refused(pod({ resources: { memory: '64MiB' } }), 'resources.memory', /their sum/)
    refused(pod({ resources: { gpu: 1 } }), 'resources.gpu', /must be 0 in a pod/)
  })

  it('names the member and field of a bad member', () => {
    const bad = (more: Record<string, unknown>) => pod({ members: [member('a'), member('b', more)] })
    refused(bad({ image: 'a//b' }), 'members.1.image')
    refused(bad({ image: '' }), 'members.1.image')
    refused(bad({ command: [] }), 'members.1.command')
    refused(bad({ command: ['', 'x'] }), 'members.1.command.0', /program/)
    refused(bad({ command: ['sh', 'a\0b'] }), 'members.1.command.1', /NUL/)
    refused(bad({ env: { 'A=B': 'x' } }), 'members.1.env.A=B')
    refused(bad({ cpu: 0 }), 'members.1.cpu')
    refused(bad({ cpu: 2000 }), 'members.1.cpu')
    refused(bad({ memory: '1MiB' }), 'members.1.memory', /at least 6MiB/)
    refused(bad({ memory: '4q' }), 'members.1.memory')
    refused(bad({ name: '.pod' }), 'members.1.name')
    refused(bad({ name: 'a/b' }), 'members.1.name')
    refused(bad({ name: 'x'.repeat(65) }), 'members.1.name')
    refused(bad({ name: 'a' }), 'members.1.name', /repeats "a"/)
    refused(bad({ extra: 1 }), 'members.1.extra', /unknown field/)
    refused(pod({ members: [member('a'), { name: 'b' }] }), 'members.1.image', /is required/)
  })

  it('refuses members whose cpu adds up past the limit of one job', () => {
    const big = Array.from({ length: 2 }, (_, i) => member(`m${i}`, { cpu: 1000 }))
    refused(pod({ members: big }), 'members', /cpu adds up to 2000/)
  })

  it('still asks a container spec for its own fields, naming each', () => {
    const one = {
      image: 'dms-test:1',
      command: ['true'],
      resources: { cpu: 1, memory: '64MiB' },
      maxDuration: 1,
      maxPrice: 1,
    }
    for (const f of ['image', 'command', 'resources'] as const) {
      const s: Record<string, unknown> = { ...one }
      delete s[f]
      refused(s, f, /is required/)
    }
    refused({ ...one, resources: { cpu: 1 } }, 'resources.memory', /is required/)
  })

  it('is posted again as members, and parses to the same spec', () => {
    const s = parseJobSpec(pod({ resources: { disk: '128MiB' }, name: 'p' }))
    const posted = postedSpecOf(s)
    assert.equal(posted.image, undefined)
    assert.equal(posted.command, undefined)
    assert.deepEqual(posted.resources, { disk: 128 * MiB })
    assert.deepEqual(parseJobSpec(posted), s)
  })
})
