/**
 * A spec read back (`GET /v1/jobs/:id`, `dms job status --json`) can be posted again (issue 20):
 * the stored form written back in the posted form parses to the same stored spec.
 */
import assert from 'node:assert/strict'
import { parseJobSpec } from '../../../dms/orchestrator/job-spec.js'
import { postedSpecOf, specOfDocument } from '../../../dms/orchestrator/job-spec-posted.js'

const now = Date.UTC(2026, 10, 22, 12)
const SHA = 'a'.repeat(64)
const PEER = '12D3KooWD3eckifWpRn9wQpMG9R9hX3sD158z7EqHWmweQAJU5SA'

const specs: Array<Record<string, unknown>> = [
  {
    image: 'alpine:3',
    command: ['echo', 'hi'],
    resources: { cpu: 1, memory: '256MiB' },
    maxDuration: 300,
    maxPrice: 1000,
  },
  {
    name: 'full',
    image: 'registry.example:5000/team/tool@sha256:' + 'b'.repeat(64),
    command: ['sh', '-c', 'cat /inputs/a/b.txt'],
    env: { K: 'v', EMPTY: '' },
    resources: { cpu: 0.5, memory: 64 * 1024 * 1024, disk: '1GiB', gpu: 1 },
    maxDuration: 60,
    maxPrice: 5,
    inputs: [{ path: 'a/b.txt', sha256: SHA }],
    retries: 0,
    providers: { allow: ['12D3KooWA'], deny: ['12D3KooWB'], direct: [PEER], gossipFallback: true },
    queueTimeout: 600,
    startAt: '2026-11-22T13:00:00.000Z',
    retryPolicy: { attempts: 2, backoff: 5, on: ['runFailed', 'timedOut'] },
    queue: 'q-1',
  },
  {
    name: 'start by a time',
    image: 'alpine:3',
    command: ['true'],
    resources: { cpu: 1, memory: '64MiB' },
    maxDuration: 60,
    maxPrice: 5,
    startBy: '2026-11-22T14:00:00.000Z',
  },
  {
    name: 'start within',
    image: 'alpine:3',
    command: ['true'],
    resources: { cpu: 1, memory: '64MiB' },
    maxDuration: 60,
    maxPrice: 5,
    startBy: '1h30m',
  },
]

describe('a stored job spec posted again (issue 20)', () => {
  for (const input of specs)
    it(`parses back to the same stored spec: ${typeof input.name === 'string' ? input.name : 'minimal'}`, () => {
      const stored = parseJobSpec(input, now)
      assert.deepEqual(parseJobSpec(postedSpecOf(stored), now), stored)
    })

  it('takes the spec of a job as `job status --json` prints it, without its queue; other documents as they are', () => {
    const stored = { ...parseJobSpec(specs[1], now), inputs: [{ path: 'a/b.txt', sha256: SHA, size: 3 }] }
    const view = { id: 'j1', state: 'completed', history: [], spec: stored }
    const posted = specOfDocument(JSON.parse(JSON.stringify(view))) as Record<string, unknown>
    assert.equal(posted.queue, undefined)
    assert.deepEqual(posted.inputs, [{ path: 'a/b.txt', sha256: SHA }], 'the size the node added is left out')
    const expected = parseJobSpec(specs[1], now)
    delete expected.queue
    assert.deepEqual(parseJobSpec(posted, now), expected)
    assert.deepEqual(specOfDocument(specs[0]), specs[0])
    assert.equal(specOfDocument('x'), 'x')
  })
})
