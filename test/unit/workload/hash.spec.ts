/**
 * The workload's hash, which contract terms sign: the same for the same workload whatever its key
 * order or a JSON round trip, different when anything that runs differs.
 */
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { isWorkloadHash, workloadHash } from '../../../dms/workload/hash.js'
import type { Workload, WorkloadMember } from '../../../dms/workload/workload.js'

const member = (name: string, more: Partial<WorkloadMember> = {}): WorkloadMember => ({
  name,
  artifact: { kind: 'image', ref: 'alpine:3' },
  command: ['sh', '-c', 'echo hi'],
  workdir: '/work',
  env: { A: '1', B: '2' },
  network: 'none',
  resources: { cpu: 0.5, memoryBytes: 64 * 1024 * 1024 },
  ...more,
})
const base: Workload = { members: [member('a'), member('b')] }
const withMember = (i: number, more: Partial<WorkloadMember>): Workload => ({
  members: base.members.map((m, j) => (j === i ? { ...m, ...more } : m)),
})

describe('workload/hash', () => {
  it('is the sha256 of the canonical JSON, in hex, stable over key order and a JSON round trip', () => {
    const h = workloadHash(base)
    assert.ok(isWorkloadHash(h))
    const reversed = (o: object) => Object.fromEntries(Object.entries(o).reverse()) as WorkloadMember
    const reordered: Workload = {
      members: base.members.map((m) => ({ ...reversed(m), env: { B: '2', A: '1' } })),
    }
    assert.equal(workloadHash(reordered), h)
    assert.equal(workloadHash(JSON.parse(JSON.stringify(base)) as Workload), h)
    // An optional field left undefined is the field absent, as on the wire.
    const { workdir: _, ...noWorkdir } = base.members[0]
    assert.equal(
      workloadHash({ members: [{ ...noWorkdir, workdir: undefined }] }),
      workloadHash({ members: [noWorkdir] }),
    )
    // Pinned: the bytes hashed are the canonical JSON, keys sorted (what the specs say).
    const one: Workload = {
      members: [
        {
          name: 'main',
          artifact: { kind: 'image', ref: 'alpine:3' },
          command: ['true'],
          env: {},
          network: 'none',
          resources: { cpu: 1, memoryBytes: 8 },
        },
      ],
    }
    const bytes =
      '{"members":[{"artifact":{"kind":"image","ref":"alpine:3"},"command":["true"],"env":{},"name":"main","network":"none","resources":{"cpu":1,"memoryBytes":8}}]}'
    assert.equal(workloadHash(one), createHash('sha256').update(bytes).digest('hex'))
  })

  it('changes when anything that runs changes', () => {
    const changed: [string, Workload][] = [
      ['command', withMember(0, { command: ['sh', '-c', 'echo bye'] })],
      ['env value', withMember(1, { env: { A: '1', B: '3' } })],
      ['env key', withMember(1, { env: { A: '1', C: '2' } })],
      ['workdir', withMember(0, { workdir: '/tmp' })],
      ['no workdir', withMember(0, { workdir: undefined })],
      ['network', withMember(1, { network: 'outbound' })],
      ['artifact', withMember(0, { artifact: { kind: 'image', ref: 'alpine:4' } })],
      ['name', withMember(1, { name: 'c' })],
      ['cpu', withMember(1, { resources: { cpu: 0.25, memoryBytes: 64 * 1024 * 1024 } })],
      ['memory', withMember(0, { resources: { cpu: 0.5, memoryBytes: 32 * 1024 * 1024 } })],
      ['gpus', withMember(0, { resources: { cpu: 0.5, memoryBytes: 64 * 1024 * 1024, gpus: { count: 1 } } })],
      ['member order', { members: [...base.members].reverse() }],
      ['a member fewer', { members: [base.members[0]] }],
    ]
    const seen = new Map([[workloadHash(base), 'base']])
    for (const [what, w] of changed) {
      const h = workloadHash(w)
      assert.equal(seen.get(h), undefined, `${what}: the same hash as ${seen.get(h)}`)
      seen.set(h, what)
    }
  })

  it('tells a hash by its form: 64 lowercase hex digits', () => {
    assert.ok(isWorkloadHash('0'.repeat(64)))
    for (const bad of ['0'.repeat(63), 'A'.repeat(64), 'z'.repeat(64), 64, undefined])
      assert.equal(isWorkloadHash(bad), false, String(bad))
  })
})
