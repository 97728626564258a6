import assert from 'node:assert/strict'
import { InvalidJobSpecError, parseJobSpec } from '../../../dms/orchestrator/job-spec.js'

const MiB = 1024 * 1024
// Docker refuses containers with less than 6 MiB (dms/orchestrator/job-spec.ts; was 4 MiB).
const MIN_MEMORY_MIB = 6

const valid = () => ({
  image: 'dms-test:1',
  command: ['sh', '-c', 'echo hi'],
  resources: { cpu: 0.5, memory: '64MiB' },
  maxDuration: 60,
  maxPrice: 1000,
})

/** Runs parseJobSpec expecting a refusal; returns the error after checking its type. */
function refusal(input: unknown): InvalidJobSpecError {
  try {
    parseJobSpec(input)
  } catch (err) {
    assert.ok(err instanceof InvalidJobSpecError, `expected InvalidJobSpecError, got ${String(err)}`)
    assert.equal(err.name, 'InvalidJobSpecError')
    assert.equal(err.code, 'INVALID_JOB_SPEC')
    return err
  }
  assert.fail(`expected ${JSON.stringify(input)} to be refused`)
}

/** Refusal naming `field` in both `.field` and the message. */
function assertRefused(input: unknown, field: string, problem?: RegExp): void {
  const err = refusal(input)
  assert.equal(err.field, field, `field of: ${err.message}`)
  assert.ok(err.message.startsWith(`${field}: `), `message names the field: ${err.message}`)
  if (problem) assert.match(err.message, problem)
}

describe('orchestrator/job-spec parseJobSpec', () => {
  it('normalizes a valid spec: sizes in bytes, defaults for disk, gpu and env', () => {
    assert.deepEqual(parseJobSpec(valid()), {
      name: undefined,
      image: 'dms-test:1',
      command: ['sh', '-c', 'echo hi'],
      env: {},
      resources: { cpu: 0.5, memoryBytes: 64 * MiB, diskBytes: 0, gpus: 0 },
      maxDurationSeconds: 60,
      maxPrice: 1000,
      retries: 3,
      providers: { allow: [], deny: [] },
    })
  })

  it('keeps the retry limit and provider constraints, and names a bad one', () => {
    const spec = parseJobSpec({
      ...valid(),
      retries: 0,
      providers: { allow: ['12D3KooA'], deny: ['12D3KooB'] },
    })
    assert.equal(spec.retries, 0)
    assert.deepEqual(spec.providers, { allow: ['12D3KooA'], deny: ['12D3KooB'] })
    assertRefused({ ...valid(), retries: 11 }, 'retries')
    assertRefused({ ...valid(), providers: { deny: [''] } }, 'providers.deny.0')
    assertRefused({ ...valid(), providers: { prefer: [] } }, 'providers.prefer', /unknown field/)
  })

  it('keeps network only when asked (absent or false: none), and names a non-boolean', () => {
    assert.equal(parseJobSpec({ ...valid(), network: true }).network, true)
    assert.equal('network' in parseJobSpec({ ...valid(), network: false }), false)
    assert.equal('network' in parseJobSpec(valid()), false)
    assertRefused({ ...valid(), network: 'yes' }, 'network')
  })

  it('keeps every optional field given, with disk in units or bytes', () => {
    const spec = parseJobSpec({
      ...valid(),
      name: 'hello',
      env: { A: '1', B: '' },
      resources: { cpu: 2, memory: 8 * MiB, disk: '1GiB', gpu: 1 },
      maxPrice: 0,
    })
    assert.equal(spec.name, 'hello')
    assert.deepEqual(spec.env, { A: '1', B: '' })
    assert.deepEqual(spec.resources, { cpu: 2, memoryBytes: 8 * MiB, diskBytes: 1024 ** 3, gpus: 1 })
    assert.equal(spec.maxPrice, 0)
    assert.equal(
      parseJobSpec({ ...valid(), resources: { cpu: 1, memory: '64MiB', disk: 4096 } }).resources.diskBytes,
      4096,
    )
  })

  it(`accepts memory of exactly the minimum (${MIN_MEMORY_MIB}MiB)`, () => {
    const min = MIN_MEMORY_MIB * MiB
    const at = (memory: string | number) =>
      parseJobSpec({ ...valid(), resources: { cpu: 1, memory } }).resources.memoryBytes
    assert.equal(at(`${MIN_MEMORY_MIB}MiB`), min)
    assert.equal(at(min), min)
  })

  it('reads sizes as Docker and Kubernetes write them: 64m, 64Mi, 1g (issue 35)', () => {
    const bytes = (memory: string, disk: string) => {
      const r = parseJobSpec({ ...valid(), resources: { cpu: 1, memory, disk } }).resources
      return [r.memoryBytes, r.diskBytes]
    }
    assert.deepEqual(bytes('64m', '1g'), [64 * MiB, 1024 * MiB])
    assert.deepEqual(bytes('64Mi', '2Gi'), [64 * MiB, 2048 * MiB])
  })

  it('refuses a value that is not an object', () => {
    for (const bad of [null, 'spec', 42, []]) refusal(bad)
  })

  it('refuses an unknown top-level field, naming it', () => {
    assertRefused({ ...valid(), priority: 'high' }, 'priority', /unknown field/)
  })

  it('refuses an unknown resources field, naming it with its path', () => {
    assertRefused(
      { ...valid(), resources: { cpu: 1, memory: '64MiB', ram: '1GiB' } },
      'resources.ram',
      /unknown field/,
    )
  })

  it('refuses a missing required field, naming it', () => {
    for (const f of ['image', 'command', 'resources', 'maxDuration', 'maxPrice'] as const) {
      const s: Record<string, unknown> = valid()
      delete s[f]
      assertRefused(s, f, /is required/)
    }
    assertRefused({ ...valid(), resources: { memory: '64MiB' } }, 'resources.cpu', /is required/)
    assertRefused({ ...valid(), resources: { cpu: 1 } }, 'resources.memory', /is required/)
  })

  it('refuses an empty image', () => {
    assertRefused({ ...valid(), image: '' }, 'image')
  })

  it('refuses cpu <= 0', () => {
    assertRefused({ ...valid(), resources: { cpu: 0, memory: '64MiB' } }, 'resources.cpu')
    assertRefused({ ...valid(), resources: { cpu: -1, memory: '64MiB' } }, 'resources.cpu')
    assertRefused({ ...valid(), resources: { cpu: '1', memory: '64MiB' } }, 'resources.cpu')
  })

  it('refuses memory in an unknown unit, naming resources.memory', () => {
    assertRefused({ ...valid(), resources: { cpu: 1, memory: '64 parsecs' } }, 'resources.memory')
  })

  it(`refuses memory below the minimum (${MIN_MEMORY_MIB}MiB), saying what the minimum is`, () => {
    const problem = new RegExp(`at least ${MIN_MEMORY_MIB}MiB`)
    for (const memory of ['3MiB', `${MIN_MEMORY_MIB - 1}MiB`, MIN_MEMORY_MIB * MiB - 1, 0])
      assertRefused({ ...valid(), resources: { cpu: 1, memory } }, 'resources.memory', problem)
  })

  it('refuses memory that is neither a byte count nor a size string', () => {
    assertRefused({ ...valid(), resources: { cpu: 1, memory: true } }, 'resources.memory')
    assertRefused({ ...valid(), resources: { cpu: 1, memory: 1.5 } }, 'resources.memory')
  })

  it('refuses a bad disk size, naming resources.disk', () => {
    assertRefused({ ...valid(), resources: { cpu: 1, memory: '64MiB', disk: 'lots' } }, 'resources.disk')
  })

  it('refuses maxDuration 0, a fraction, or more than a week', () => {
    assertRefused({ ...valid(), maxDuration: 0 }, 'maxDuration')
    assertRefused({ ...valid(), maxDuration: 1.5 }, 'maxDuration')
    assertRefused({ ...valid(), maxDuration: 604_801 }, 'maxDuration')
    assert.equal(parseJobSpec({ ...valid(), maxDuration: 604_800 }).maxDurationSeconds, 604_800)
  })

  it('refuses an empty command or a non-string argument', () => {
    assertRefused({ ...valid(), command: [] }, 'command')
    assertRefused({ ...valid(), command: 'echo hi' }, 'command')
    assertRefused({ ...valid(), command: ['echo', 1] }, 'command.1')
  })

  it('refuses a negative maxPrice and a non-string env value', () => {
    assertRefused({ ...valid(), maxPrice: -1 }, 'maxPrice')
    assertRefused({ ...valid(), env: { A: 1 } }, 'env.A')
  })

  // Issue 13: what the executor cannot run is refused here, by the executor's own rules.
  it('refuses image strings that are not references: path tricks, shell text, upper case, a leading dash', () => {
    for (const image of [
      '../../containers/json',
      'a//b',
      'x/./y',
      'img;rm -rf /',
      '$(id)',
      'Upper:1',
      '-rm',
      'a b',
    ])
      assertRefused({ ...valid(), image }, 'image', /image: /)
    for (const image of ['busybox', 'registry.example:5000/team/app:v1', `app@sha256:${'0'.repeat(64)}`])
      assert.equal(parseJobSpec({ ...valid(), image }).image, image)
  })

  it('refuses env names with "=", a space or NUL, NUL in values and in arguments, naming the entry', () => {
    assertRefused({ ...valid(), env: { 'A=B': 'x' } }, 'env.A=B', /name must be letters/)
    assertRefused({ ...valid(), env: { 'A B': 'x' } }, 'env.A B')
    assertRefused({ ...valid(), env: { 'A\0': 'x' } }, 'env.A\0')
    assertRefused({ ...valid(), env: { '1A': 'x' } }, 'env.1A')
    assertRefused({ ...valid(), env: { A: 'x\0y' } }, 'env.A', /NUL/)
    assertRefused({ ...valid(), command: ['sh', '-c', 'echo\0hi'] }, 'command.2', /NUL/)
    assertRefused({ ...valid(), command: ['', 'x'] }, 'command.0', /program/)
    assert.deepEqual(parseJobSpec({ ...valid(), env: { _OK_1: 'a=b c' } }).env, { _OK_1: 'a=b c' })
  })

  it('refuses a maxPrice above 2^53-1 and a CPU share below the 0.01 core Docker can enforce', () => {
    assertRefused({ ...valid(), maxPrice: 2 ** 53 }, 'maxPrice')
    assertRefused({ ...valid(), maxPrice: 1e300 }, 'maxPrice')
    assert.equal(parseJobSpec({ ...valid(), maxPrice: 2 ** 53 - 1 }).maxPrice, 2 ** 53 - 1)
    assertRefused({ ...valid(), resources: { cpu: 1e-10, memory: '64MiB' } }, 'resources.cpu', />= 0.01/)
    assertRefused({ ...valid(), resources: { cpu: 0.009, memory: '64MiB' } }, 'resources.cpu')
    assert.equal(parseJobSpec({ ...valid(), resources: { cpu: 0.01, memory: '64MiB' } }).resources.cpu, 0.01)
  })

  it('refuses control characters in the name (it is shown on terminals)', () => {
    for (const name of ['\u001b[2J', 'a\nb', 'bell\u0007', 'c1\u009b'])
      assertRefused({ ...valid(), name }, 'name')
    assert.equal(parseJobSpec({ ...valid(), name: 'données – ok' }).name, 'données – ok')
  })

  it('queueTimeout: whole seconds up to 7 days; startAt: an ISO time with a zone, at most 30 days ahead', () => {
    const now = Date.parse('2026-11-22T12:00:00Z')
    const parsed = parseJobSpec({ ...valid(), queueTimeout: 600, startAt: '2026-11-22T18:00:00Z' }, now)
    assert.equal(parsed.queueTimeoutSeconds, 600)
    assert.equal(parsed.startAt, Date.parse('2026-11-22T18:00:00Z'))
    assert.equal(parseJobSpec({ ...valid(), startAt: '2026-11-22T13:00:00.5+01:00' }, now).startAt, now + 500)
    assert.equal(
      parseJobSpec(valid(), now).queueTimeoutSeconds,
      undefined,
      'the node default is filled in at post',
    )
    assertRefused({ ...valid(), queueTimeout: -1 }, 'queueTimeout')
    assertRefused({ ...valid(), queueTimeout: 1.5 }, 'queueTimeout')
    assertRefused({ ...valid(), queueTimeout: 604801 }, 'queueTimeout')
    for (const startAt of ['tomorrow', '2026-11-22T18:00:00', '2026-13-40T99:00:00Z', '', 'x'.repeat(65)])
      assertRefused({ ...valid(), startAt }, 'startAt')
    assert.throws(
      () => parseJobSpec({ ...valid(), startAt: '2027-01-01T00:00:00Z' }, now),
      (e: unknown) =>
        e instanceof InvalidJobSpecError && /startAt: must be at most 30 days ahead/.test(e.message),
    )
  })

  it('startBy: an ISO time (not before the start) or a duration after the start, at most 7 days', () => {
    const now = Date.parse('2026-11-22T12:00:00Z')
    const at = (v: string, over: Record<string, unknown> = {}) =>
      parseJobSpec({ ...valid(), ...over, startBy: v }, now).startBy
    assert.deepEqual(at('10m'), { withinSeconds: 600 })
    assert.deepEqual(at('1h30m'), { withinSeconds: 5400 })
    assert.deepEqual(at('90'), { withinSeconds: 90 })
    assert.deepEqual(at('2026-11-22T12:30:00Z'), { at: now + 1_800_000 })
    assert.deepEqual(at('2026-11-22T18:30:00Z', { startAt: '2026-11-22T18:00:00Z' }), {
      at: Date.parse('2026-11-22T18:30:00Z'),
    })
    assert.equal(parseJobSpec(valid(), now).startBy, undefined)
    for (const startBy of ['soon', '', '-5', '1.5h', '169h', 'x'.repeat(65), '2026-11-22T18:00:00'])
      assertRefused({ ...valid(), startBy }, 'startBy')
    assert.throws(
      () => parseJobSpec({ ...valid(), startBy: '2026-11-22T11:00:00Z' }, now),
      (e: unknown) => e instanceof InvalidJobSpecError && /startBy: is in the past/.test(e.message),
    )
    assert.throws(
      () =>
        parseJobSpec({ ...valid(), startAt: '2026-11-22T18:00:00Z', startBy: '2026-11-22T17:00:00Z' }, now),
      (e: unknown) => e instanceof InvalidJobSpecError && /startBy: is before startAt/.test(e.message),
    )
    // As a time, bounded like the duration: at most 7 days after the job's start.
    assert.deepEqual(at('2026-11-29T12:00:00Z'), { at: now + 7 * 86_400_000 })
    for (const [startBy, startAt] of [
      ['2026-11-29T12:00:01Z', undefined],
      ['9999-12-31T23:59:59Z', undefined],
      ['2026-12-02T18:00:01Z', '2026-11-25T18:00:00Z'],
    ])
      assert.throws(
        () => parseJobSpec({ ...valid(), startBy, ...(startAt !== undefined ? { startAt } : {}) }, now),
        (e: unknown) =>
          e instanceof InvalidJobSpecError &&
          /startBy: must be at most 7 days after the job starts/.test(e.message),
        startBy,
      )
  })

  it('providers.direct: Ed25519 peer ids, at most 32, duplicates dropped; gossipFallback defaults to false', () => {
    const peer = '12D3KooWD3eckifWpRn9wQpMG9R9hX3sD158z7EqHWmweQAJU5SA'
    const parsed = parseJobSpec({ ...valid(), providers: { direct: [peer, peer] } })
    assert.deepEqual(parsed.providers, { allow: [], deny: [], direct: [peer], gossipFallback: false })
    assertRefused(
      { ...valid(), providers: { direct: [peer, 'not-a-peer'] } },
      'providers.direct.1',
      /Ed25519/,
    )
    assertRefused({ ...valid(), providers: { direct: Array(33).fill(peer) } }, 'providers.direct')
    assert.equal(parseJobSpec({ ...valid(), providers: { direct: [] } }).providers.direct, undefined)
  })
})
