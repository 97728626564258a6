/**
 * Selection and cancel on a real network (in-process nodes, real libp2p, real Docker): five
 * providers of different prices and sizes, the documented weighted ranking, declines with reasons,
 * a job nobody can run, and a cancel mid-run that stops the container and pays the time used.
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import Docker from 'dockerode'
import { ApiClient } from '../../dms/api/client.js'
import { TERMINATION } from '../../dms/contracts/model.js'
import { billableMs, billOf } from '../../dms/contracts/money.js'
import { parseJobSpec } from '../../dms/orchestrator/job-spec.js'
import type { StoredJob } from '../../dms/orchestrator/orchestrator.js'
import { scoreBids } from '../../dms/orchestrator/select.js'
import { jobReaches, startNetwork, TEST_IMAGE, type TestNetwork } from '../helpers/network.js'
import { termsMaxDuration } from '../../dms/contracts/terms.js'

const MiB = 1024 * 1024

describe('selection among five providers (real network, real Docker)', function () {
  this.timeout(120_000)
  let net: TestNetwork

  before(async function () {
    execFileSync('bash', ['scripts/build-test-image.sh'], { stdio: 'inherit' })
    net = await startNetwork(
      [
        { cpu: 1, memoryBytes: 1024 * MiB, perCpuHour: 1000 }, // 0: too few cores
        { cpu: 4, memoryBytes: 128 * MiB, perCpuHour: 1000 }, // 1: too little memory
        { cpu: 2, memoryBytes: 512 * MiB, perCpuHour: 3000 }, // 2: the job fills its cores
        { cpu: 8, memoryBytes: 4096 * MiB, perCpuHour: 2400 }, // 3: cheapest bid (roomy: fit is not ranked)
        { cpu: 4, memoryBytes: 1024 * MiB, perCpuHour: 6000 }, // 4: dear
      ],
      // Wait for every provider's answer (the window still closes once all five answered).
      { requester: { enoughBids: 5 } },
    )
  })
  after(async () => net?.stop())

  it('the documented weighted score picks the winner; too-small providers decline with reasons', async () => {
    const posted = await net.requester.orchestrator!.post(
      parseJobSpec({
        image: TEST_IMAGE,
        command: ['sh', '-c', 'echo chosen'],
        resources: { cpu: 2, memory: '256MiB' },
        maxDuration: 60,
        maxPrice: 300,
      }),
    )
    const job = await jobReaches(net.requester, posted.record.id)
    const r = job.record
    assert.equal(job.state, 'completed', JSON.stringify(r.error))
    const peer = (i: number) => net.providers[i].peerId

    // Three bids; the two small providers declined, each saying which resource is short.
    assert.deepEqual(r.bids.map((b) => b.provider).sort(), [peer(2), peer(3), peer(4)].sort())
    const reasons = new Map(r.declines.map((d) => [d.provider, d.reasons.join('; ')]))
    assert.match(reasons.get(peer(0)) ?? '', /not enough cpu: need 2/)
    assert.match(reasons.get(peer(1)) ?? '', /not enough memory: need 256 MiB/)

    // Provider 3 bid the lowest total and wins: the score (0.6 price + 0.2 finish + 0.2
    // unreliability) uses only what the requester checks itself, and every term but price is equal.
    const total = (i: number) => r.bids.find((b) => b.provider === peer(i))!.total
    assert.ok(total(3) < total(2), `provider 3 is cheaper (${total(3)} < ${total(2)})`)
    const ranked = scoreBids(r.bids, {
      maxPrice: 300,
      maxDurationSeconds: 60,
      reliability: r.reliability!,
      now: r.history.find((h) => h.state === 'selecting')!.at,
    })
    assert.equal(ranked[0].provider, peer(3))
    assert.equal(r.winner?.provider, peer(3))
    assert.match(r.winner.why, /lowest score of 3 bids/)
    assert.equal(r.result?.stdout, 'chosen\n')
  })

  it('no capable provider: fails at once with every provider’s reason', async () => {
    const posted = await net.requester.orchestrator!.post(
      parseJobSpec({
        image: TEST_IMAGE,
        command: ['true'],
        resources: { cpu: 16, memory: '64MiB' },
        maxDuration: 60,
        maxPrice: 1_000_000,
      }),
    )
    const job = await jobReaches(net.requester, posted.record.id)
    assert.equal(job.state, 'failed')
    assert.equal(job.record.error?.code, 'NO_BIDS')
    assert.equal(job.record.error?.declines?.length, 5)
    for (const p of net.providers) assert.match(job.record.error.message, new RegExp(p.peerId.slice(-8)))
    assert.match(job.record.error.message, /not enough cpu: need 16/)
    assert.deepEqual(
      job.record.history.map((h) => h.state),
      ['bidding', 'selecting', 'failed'],
    )
  })
})

describe('cancel mid-run (real network, real Docker)', function () {
  this.timeout(120_000)
  let net: TestNetwork
  let api: ApiClient

  before(async function () {
    execFileSync('bash', ['scripts/build-test-image.sh'], { stdio: 'inherit' })
    // 1000 per CPU-second: any time used shows in the settlement.
    net = await startNetwork([{ cpu: 1, memoryBytes: 512 * MiB, perCpuHour: 3_600_000 }], {
      fund: 100_000_000,
    })
    api = new ApiClient(net.requester.socketPath!)
  })
  after(async () => net?.stop())

  it('DELETE stops the container, ends `cancelled`, and the contract pays the time used', async () => {
    const posted = await api.ok<{ id: string }>('POST', '/v1/jobs', {
      image: TEST_IMAGE,
      command: ['sh', '-c', 'sleep 60'],
      resources: { cpu: 1, memory: '64MiB' },
      maxDuration: 120,
      maxPrice: 100_000_000,
    })
    const running = await new Promise<string>((resolve) => {
      const off = net.requester.orchestrator!.onUpdate((jobId, u) => {
        if (jobId === posted.id && u.state === 'running') {
          off()
          resolve(u.allocationId)
        }
      })
    })
    const docker = new Docker()
    const label = { label: [`dms.allocation=${running}`] }
    assert.equal((await docker.listContainers({ filters: label })).length, 1, 'the container runs')

    const accepted = await api.call<{ id: string; state: string }>('DELETE', `/v1/jobs/${posted.id}`)
    assert.equal(accepted.status, 202)
    assert.deepEqual(accepted.body, { id: posted.id, state: 'cancelling' })

    const job: StoredJob = await jobReaches(net.requester, posted.id)
    assert.equal(job.state, 'cancelled', JSON.stringify(job.record.error))
    assert.deepEqual(await docker.listContainers({ all: true, filters: label }), [], 'container gone')
    const receipt = job.record.result!.receipt.receipt
    assert.equal(receipt.status, 'cancelled')
    const s = job.record.settlement!
    const t = job.record.contract!.terms
    assert.equal(s.outcome, 'terminated')
    assert.equal(s.reason, TERMINATION.requesterCancelled)
    // Paid exactly the time the receipt reports, the rest of the escrow refunded.
    const ms = billableMs(receipt.usage.wallSeconds, termsMaxDuration(t))
    assert.ok(ms > 0, 'some time was used')
    assert.equal(s.paidToProvider, billOf(t, { kind: 'cancel', ms }))
    assert.equal(s.paidToProvider + s.refundedToRequester, t.escrow)
    assert.ok(s.refundedToRequester > 0)

    // A job that ended cannot be cancelled; an unknown one is not found.
    const again = await api.call<{ error: { code: string } }>('DELETE', `/v1/jobs/${posted.id}`)
    assert.equal(again.status, 409)
    assert.equal(again.body.error.code, 'JOB_ENDED')
    const unknown = await api.call<{ error: { code: string } }>('DELETE', '/v1/jobs/no-such-job')
    assert.equal(unknown.status, 404)
    assert.equal(unknown.body.error.code, 'JOB_NOT_FOUND')
  })

  it('job timeout: the run is killed at its max duration and settled on its usage', async () => {
    const posted = await net.requester.orchestrator!.post(
      parseJobSpec({
        image: TEST_IMAGE,
        command: ['sh', '-c', 'sleep 60'],
        resources: { cpu: 1, memory: '64MiB' },
        maxDuration: 1,
        maxPrice: 100_000_000,
      }),
    )
    const job = await jobReaches(net.requester, posted.record.id)
    const r = job.record
    assert.equal(job.state, 'failed')
    assert.equal(r.error?.code, 'RUN_TIMED_OUT')
    const receipt = r.result!.receipt.receipt
    assert.equal(receipt.status, 'timed_out')
    const t = r.contract!.terms
    const s = r.settlement!
    assert.equal(s.outcome, 'settled', 'a verified timed-out run is settled, not refunded')
    const ms = billableMs(receipt.usage.wallSeconds, termsMaxDuration(t))
    assert.equal(
      s.paidToProvider,
      billOf(t, { kind: 'result', status: receipt.status, exitCode: receipt.exitCode, ms }),
    )
    assert.equal(s.paidToProvider + s.refundedToRequester, t.escrow)
    const docker = new Docker()
    const left = await docker.listContainers({
      all: true,
      filters: { label: [`dms.allocation=${r.allocationId}`] },
    })
    assert.deepEqual(left, [], 'the container is gone')
  })
})
