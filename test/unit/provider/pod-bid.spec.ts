/**
 * A pod at the provider (specs/job-spec.md, "Pods"): its bid request is bounded before anything is
 * looked at, it is declined with the usual reasons for any member (image, network), and its
 * invocation must match what was bid on and what the contract says.
 */
import assert from 'node:assert/strict'
import type { BidRequest } from '../../../dms/protocol/messages.js'
import { needsOf, type WorkloadNeeds } from '../../../dms/workload/needs.js'
import { workloadTotals, type Workload, type WorkloadMember } from '../../../dms/workload/workload.js'
import { forTerms, member as podMember, type ContainerInit } from '../../helpers/workload.js'
import { acceptJob, compareCapability } from '../../../dms/provider/capability.js'
import { LIMITS } from '../../../dms/protocol/bounds.js'
import { invokedWorkloadProblem } from '../../../dms/provider/invoked-workload.js'
import { memberOutcomes } from '../../../dms/provider/publish.js'
import { checkBidRequest } from '../../../dms/provider/validate.js'

const MiB = 1024 * 1024
const member = (name: string, more: Partial<ContainerInit> = {}): WorkloadMember =>
  podMember(name, {
    image: 'dms-test:1',
    command: ['sh', '-c', 'true'],
    cpu: 0.5,
    memoryBytes: 64 * MiB,
    ...more,
  })
const members = () => [member('a'), member('b', { image: 'tool:2', network: true })]
/** The pod's needs as its bid request states them: the members without command and env. */
const podNeeds = (): WorkloadNeeds => needsOf({ members: members() })
const request = (over: Partial<BidRequest> = {}): BidRequest => ({
  jobId: 'j1',
  workloadNeeds: podNeeds(),
  maxDurationSeconds: 60,
  maxPrice: 1000,
  deadline: 1,
  exclude: [],
  ...over,
})
/** A plain job's needs: the terms' image and resources, one member. */
const oneNeeds = (): WorkloadNeeds => needsOf(forTerms(terms, ['true']))
const inv = (m: WorkloadMember[] = members()): Workload => ({ members: m })
const terms = { image: 'dms-test:1', resources: { cpu: 1, memoryBytes: 128 * MiB, diskBytes: 0, gpus: 0 } }

describe('provider: pods', () => {
  it('takes a well-formed pod bid request and names what is wrong in another', () => {
    assert.equal(checkBidRequest(request()), undefined)
    const [a, b] = podNeeds().members
    const pod = (...m: unknown[]) => request({ workloadNeeds: { members: m } as WorkloadNeeds })
    assert.equal(checkBidRequest(pod(a)), undefined, 'one member is a plain job')
    assert.match(checkBidRequest(pod()) ?? '', /^workloadNeeds\.members /)
    assert.match(checkBidRequest(pod(...Array<unknown>(9).fill(a))) ?? '', /^workloadNeeds\.members /)
    assert.match(
      checkBidRequest(pod(a, { ...b, name: 'a' })) ?? '',
      /^workloadNeeds\.members\.1\.name repeats "a"/,
    )
    assert.match(checkBidRequest(pod(a, { ...b, name: '.x' })) ?? '', /^workloadNeeds\.members\.1\.name /)
    const image = (ref: string) => ({ ...b, artifact: { kind: 'image', ref } })
    assert.match(checkBidRequest(pod(a, image(''))) ?? '', /^workloadNeeds\.members\.1\.artifact/)
    assert.match(
      checkBidRequest(pod(a, image('x'.repeat(513)))) ?? '',
      /^workloadNeeds\.members\.1\.artifact/,
    )
    assert.match(
      checkBidRequest(pod(a, { ...b, network: true })) ?? '',
      /^workloadNeeds\.members\.1\.network/,
    )
    // What only the winner gets has no place in the needs: a request carrying it is malformed.
    assert.match(
      checkBidRequest(pod(a, { ...b, env: { KEY: 'secret' } })) ?? '',
      /^workloadNeeds\.members\.1/,
    )
  })

  it("declines a pod for any member's image or network, with the usual reasons", () => {
    const fits = compareCapability(workloadTotals(podNeeds()), {
      cpu: 2,
      memoryBytes: 512 * MiB,
      diskBytes: 0,
      gpus: 0,
    })
    const decide = (allowNetwork: boolean, hasTool: boolean) =>
      acceptJob(
        fits,
        {
          allowedImages: ['dms-test:*', 'tool:*'],
          allowNetwork,
          hasImage: true,
          networkMembers: ['b'],
          moreImages: [{ image: 'tool:2', hasImage: hasTool }],
          price: 1,
          maxPrice: 10,
          excluded: false,
        },
        'dms-test:1',
        60,
      )
    assert.deepEqual(decide(true, true), { accept: true, reasons: [] })
    assert.deepEqual(decide(false, false).reasons, [
      'network not allowed here: member b asks for network access',
      'image tool:2 is not available on this provider',
    ])
    const notAllowed = acceptJob(
      fits,
      {
        allowedImages: ['dms-test:*'],
        hasImage: true,
        moreImages: [{ image: 'tool:2', hasImage: true }],
        price: 1,
        maxPrice: 10,
        excluded: false,
      },
      'dms-test:1',
      60,
    )
    assert.deepEqual(notAllowed.reasons, ['image tool:2 is not allowed here'])
  })

  it('takes the workload of the pod it bid on: same members, shares that add up to the terms', () => {
    assert.equal(invokedWorkloadProblem(inv(), podNeeds(), terms, true), undefined)
    // One container bid on, one invoked: the terms' image and resources.
    assert.equal(invokedWorkloadProblem(forTerms(terms, ['true']), oneNeeds(), terms, true), undefined)
  })

  it('refuses a forged workload whose members differ from the bid request or the terms', () => {
    const refused = (w: Workload, allow = true, r = podNeeds()) => invokedWorkloadProblem(w, r, terms, allow)
    const [a, b] = members()
    assert.match(
      refused(inv([a, { ...b, name: 'c' }])) ?? '',
      /members\.1\.name is not the bid request's "b"/,
    )
    assert.match(
      refused(inv([a, { ...b, artifact: { kind: 'image', ref: 'evil:1' } }])) ?? '',
      /members\.1\.artifact/,
    )
    assert.match(refused(inv([{ ...a, network: 'outbound' }, b])) ?? '', /members\.0\.network/)
    assert.match(refused(inv([a])) ?? '', /named 2 members/)
    assert.match(refused(inv([a, b, member('c')])) ?? '', /named 2 members/)
    assert.match(
      refused(inv([{ ...a, resources: { cpu: 1.5, memoryBytes: 64 * MiB } }, b])) ?? '',
      /do not add up to the contract's 1/,
    )
    assert.match(
      refused(inv([a, { ...b, resources: { cpu: 0.5, memoryBytes: 512 * MiB } }])) ?? '',
      /do not add up/,
    )
    assert.match(refused(inv([a, { ...b, command: [] }])) ?? '', /members\.1\.command/)
    assert.match(refused(inv([a, { ...b, env: { 'A=B': 'x' } }])) ?? '', /members\.1\.env\."A=B"/)
    assert.equal(refused(inv(), false), 'network not allowed here: member b asks for network access')
    assert.match(refused(inv(), true, oneNeeds()) ?? '', /was for one container/)
    assert.match(
      invokedWorkloadProblem(inv(), podNeeds(), { ...terms, image: 'tool:2' }, true) ?? '',
      /image is not the first member's/,
    )
  })

  it("refuses a plain job's workload that is not the contract's image and resources", () => {
    const one = oneNeeds()
    const refused = (w: Workload, allow = true) => invokedWorkloadProblem(w, one, terms, allow)
    assert.match(refused(forTerms({ ...terms, image: 'evil:1' }, ['true'])) ?? '', /not the contract's image/)
    const more = { ...terms, resources: { ...terms.resources, memoryBytes: 256 * MiB } }
    assert.match(refused(forTerms(more, ['true'])) ?? '', /not the contract's resources/)
    assert.match(
      refused(forTerms(terms, ['true'], { network: 'outbound' }), false) ?? '',
      /network not allowed/,
    )
    assert.equal(refused(forTerms(terms, ['true'], { network: 'outbound' }), true), undefined)
  })

  it("cuts each member's output in the result to its share, so a pod's result is no larger than a container's", () => {
    const usage = { wallSeconds: 1, cpuSeconds: 1, peakMemoryBytes: 1 }
    const big = 'x'.repeat(200_000)
    const out = memberOutcomes(
      ['a', 'b', 'c'].map((name) => ({
        name,
        status: 'completed' as const,
        exitCode: 0,
        stdout: big,
        stderr: name === 'c' ? 'small' : '',
        truncated: false,
        usage,
      })),
    )
    const share = Math.floor(LIMITS.log / 3)
    assert.deepEqual(
      out.map((m) => [m.name, m.stdout.length, m.stderr, m.truncated]),
      [
        ['a', share, '', true],
        ['b', share, '', true],
        ['c', share, 'small', true],
      ],
    )
    assert.ok(out.reduce((n, m) => n + m.stdout.length, 0) <= LIMITS.log)
    assert.equal('usage' in out[0], false)
  })
})
