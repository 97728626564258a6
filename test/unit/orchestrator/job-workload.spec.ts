/**
 * A job's `workdir` (specs/job-spec.md): bounded in the job spec and carried by the workload to
 * the container's WorkingDir.
 */
import assert from 'node:assert/strict'
import { createOptions } from '../../../dms/executor/docker/container-config.js'
import { InvalidJobSpecError, parseJobSpec } from '../../../dms/orchestrator/job-spec.js'
import { workloadOfJob } from '../../../dms/orchestrator/job-workload.js'
import { workloadProblem } from '../../../dms/workload/check.js'

const valid = (more: Record<string, unknown> = {}) => ({
  image: 'dms-test:1',
  command: ['pwd'],
  resources: { cpu: 0.5, memory: '64MiB' },
  maxDuration: 60,
  maxPrice: 1000,
  ...more,
})

function refusedField(input: unknown): string {
  try {
    parseJobSpec(input)
  } catch (err) {
    assert.ok(err instanceof InvalidJobSpecError, String(err))
    return err.field
  }
  assert.fail(`${JSON.stringify(input).slice(0, 80)} was taken`)
}

describe('orchestrator: a job spec as a workload', () => {
  it("carries workdir from the job spec to the container's working directory", () => {
    const w = workloadOfJob(parseJobSpec(valid({ workdir: '/tmp' })))
    assert.equal(w.members[0].workdir, '/tmp')
    assert.equal(workloadProblem(w), undefined)
    const opts = createOptions(
      { jobId: 'j', allocationId: 'a', workload: w, timeoutSeconds: 5 },
      w.members[0],
      {
        user: '1:1',
        labelPrefix: 'dms',
        owner: 'p',
        outputsDir: '/o',
        maxLogBytes: 1024,
      },
    )
    assert.equal(opts.WorkingDir, '/tmp')
    const none = workloadOfJob(parseJobSpec(valid()))
    assert.equal('workdir' in none.members[0], false)
  })

  it('refuses a workdir that is relative, too long or holds a NUL, and one given with members', () => {
    assert.equal(refusedField(valid({ workdir: 'tmp' })), 'workdir')
    assert.equal(refusedField(valid({ workdir: '' })), 'workdir')
    assert.equal(refusedField(valid({ workdir: `/${'a'.repeat(4096)}` })), 'workdir')
    assert.equal(refusedField(valid({ workdir: '/a\0b' })), 'workdir')
    assert.doesNotThrow(() => parseJobSpec(valid({ workdir: `/${'a'.repeat(4095)}` })))
    const pod = {
      maxDuration: 60,
      maxPrice: 1000,
      workdir: '/tmp',
      members: ['a', 'b'].map((name) => ({
        name,
        image: 'dms-test:1',
        command: ['true'],
        cpu: 0.5,
        memory: '16MiB',
      })),
    }
    assert.equal(refusedField(pod), 'workdir')
  })

  it('the workload check refuses the same workdirs from a peer', () => {
    const w = workloadOfJob(parseJobSpec(valid()))
    const at = (workdir: string) => workloadProblem({ members: [{ ...w.members[0], workdir }] })?.field
    assert.equal(at('/ok'), undefined)
    assert.equal(at('relative'), 'members.0.workdir')
    assert.equal(at('/a\0b'), 'members.0.workdir')
    assert.equal(at(`/${'a'.repeat(4096)}`), 'members.0.workdir')
  })
})
