/**
 * A job to settlement on a provider whose engine is podman (Debian's, through its Docker-compatible
 * API; specs/executor.md, "Docker-API engines"): real libp2p on 127.0.0.1, a real podman service.
 * Beside it a cheaper provider on the same podman left with Docker's log driver: its self-check
 * fails at start, so it declines instead of winning the job and failing it. Skipped where podman is
 * not installed, failed under CI=true.
 */
import assert from 'node:assert/strict'
import { ApiClient } from '../../dms/api/client.js'
import type { StoredJob } from '../../dms/orchestrator/orchestrator.js'
import { jobReaches, startNetwork, TEST_IMAGE, type TestNetwork } from '../helpers/network.js'
import { podmanMissing, startPodman, type TestPodman } from '../helpers/podman.js'

const MiB = 1024 * 1024
// podman's own limits are refused where the host's are lower (test/e2e/executor/podman-engine.ts).
const ULIMITS = [
  { name: 'nofile' as const, soft: 1024, hard: 1024 },
  { name: 'nproc' as const, soft: 16384, hard: 16384 },
]

describe('a job on a podman-backed provider (real podman, real network)', function () {
  this.timeout(180_000)
  let podman: TestPodman | undefined
  let net: TestNetwork | undefined

  before(async function () {
    const why = podmanMissing()
    if (why !== undefined) {
      // eslint-disable-next-line no-console -- the stated reason for the skip
      console.warn(`skipping the podman job test: ${why}`)
      this.skip()
    }
    podman = await startPodman()
  })
  after(async () => {
    await net?.stop()
    await podman?.stop()
  })

  it('runs in podman and settles, while a provider with a log driver podman refuses declines', async () => {
    const socketPath = podman!.socketPath
    net = await startNetwork([
      { cpu: 1, memoryBytes: 512 * MiB, perCpuHour: 1000, docker: { socketPath, ulimits: ULIMITS } },
      {
        cpu: 1,
        memoryBytes: 512 * MiB,
        perCpuHour: 3000,
        docker: { socketPath, logDriver: 'k8s-file', ulimits: ULIMITS },
      },
    ])
    const api = new ApiClient(net.requester.socketPath!)
    const posted = await api.ok<{ id: string }>('POST', '/v1/jobs', {
      image: TEST_IMAGE,
      // Docker puts /.dockerenv in every container; podman does not.
      command: [
        'sh',
        '-c',
        'test -e /.dockerenv && echo docker || echo podman; echo -n 42 > /outputs/answer.txt',
      ],
      resources: { cpu: 0.5, memory: '64MiB' },
      maxDuration: 60,
      maxPrice: 10_000,
    })
    await jobReaches(net.requester, posted.id)
    const job = await api.ok<StoredJob['record'] & { state: string }>('GET', `/v1/jobs/${posted.id}`)

    assert.equal(job.state, 'completed', JSON.stringify(job.error))
    assert.deepEqual(
      job.bids.map((b) => b.provider),
      [net.providers[1].peerId],
      'only the provider whose engine passed its self-check bid',
    )
    assert.equal(job.result!.stdout.trim(), 'podman')
    assert.deepEqual(job.verification, { outputsHashOk: true, receiptSignatureOk: true })
    const answer = await api.raw('GET', `/v1/jobs/${posted.id}/outputs/answer.txt`)
    assert.equal(answer.body.toString(), '42')
    const s = job.settlement!
    assert.ok(s.paidToProvider > 0)
    assert.equal(s.paidToProvider + s.refundedToRequester, job.contract!.terms.escrow)
    const declines = net.providers[0].provider!.declines
    assert.ok((declines['engine unavailable'] ?? 0) >= 1, JSON.stringify(declines))
  })
})
