import assert from 'node:assert/strict'
import { workloadProblem } from '../../../dms/workload/check.js'
import { workloadTotals, type Workload, type WorkloadMember } from '../../../dms/workload/workload.js'

const member = (over: Partial<WorkloadMember> = {}): WorkloadMember => ({
  name: 'main',
  artifact: { kind: 'image', ref: 'alpine:3.20' },
  command: ['sh', '-c', 'pwd'],
  env: { A: '1' },
  network: 'none',
  resources: { cpu: 0.5, memoryBytes: 64 * 1024 * 1024 },
  ...over,
})

describe('workload: one declared shape of what runs', () => {
  it('a plain job is a pod of one; a bundle artifact and GPUs are declared shapes', () => {
    assert.equal(workloadProblem({ members: [member()] }), undefined)
    const gpu = member({
      artifact: { kind: 'bundle', sha256: 'a'.repeat(64) },
      resources: {
        cpu: 1,
        memoryBytes: 1 << 30,
        diskBytes: 0,
        gpus: { count: 1, model: 'H100', minMemoryBytes: 1 },
      },
    })
    assert.equal(workloadProblem({ members: [gpu] }), undefined)
  })

  it('refuses what cannot run, naming the field', () => {
    const cases: Array<[unknown, string]> = [
      [{ members: [] }, 'members'],
      [{ members: [member(), member({ name: 'b' })], extra: 1 }, 'extra'],
      [{ members: [member({ command: [] })] }, 'members.0.command'],
      [{ members: [member({ command: ['a\0b'] })] }, 'members.0.command.0'],
      [{ members: [member({ env: { 'A=B': 'x' } })] }, 'members.0.env."A=B"'],
      [{ members: [member({ env: { A: 'x\0' } })] }, 'members.0.env."A"'],
      [{ members: [member({ env: { ['A'.repeat(257)]: 'x' } })] }, 'members.0.env."AAAA'],
      [{ members: [member(), member()] }, 'members.1.name'],
      [{ members: [member({ artifact: { kind: 'image', ref: '' } })] }, 'members.0.artifact'],
      [{ members: [member({ resources: { cpu: 0.001, memoryBytes: 1 << 30 } })] }, 'members.0.resources.cpu'],
      [{ members: [member({ network: 'bridge' as 'none' })] }, 'members.0.network'],
      [{ members: Array.from({ length: 9 }, (_, i) => member({ name: `m${i}` })) }, 'members'],
    ]
    for (const [w, field] of cases) {
      const p = workloadProblem(w)
      assert.ok(p !== undefined, `${JSON.stringify(w).slice(0, 120)} passed`)
      assert.ok(p.field.startsWith(field), `${p.field} for ${field}: ${p.problem}`)
    }
  })

  it('a runtime artifact is an absolute path of plain segments: no "..", no empty or odd segment', () => {
    const runtime = (path: string): Workload => ({
      members: [member({ artifact: { kind: 'runtime', path }, command: [path] })],
    })
    assert.equal(workloadProblem(runtime('/usr/bin/python3')), undefined)
    assert.equal(workloadProblem(runtime('/opt/py-3.12/bin/python3.12')), undefined)
    for (const bad of [
      'python3',
      '/',
      '/usr/../etc/passwd',
      '/usr//bin/sh',
      '/usr/bin/',
      '/.hidden',
      '/a b',
      `/${'a'.repeat(256)}`,
    ]) {
      const p = workloadProblem(runtime(bad))
      assert.ok(p !== undefined, `${bad} passed`)
      assert.ok(p.field.startsWith('members.0.artifact'), `${p.field} for ${bad}`)
    }
  })

  it('adds the members up in order', () => {
    const w: Workload = {
      members: [
        member({ name: 'a', resources: { cpu: 0.1, memoryBytes: 10 << 20, diskBytes: 5 } }),
        member({ name: 'b', resources: { cpu: 0.2, memoryBytes: 20 << 20, gpus: { count: 2 } } }),
      ],
    }
    assert.deepEqual(workloadTotals(w), { cpu: 0.1 + 0.2, memoryBytes: 30 << 20, diskBytes: 5, gpus: 2 })
  })
})
