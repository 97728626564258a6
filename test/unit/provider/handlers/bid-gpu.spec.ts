/**
 * GPU jobs at the bid request (specs/resources.md, "GPUs by index"): a provider bids only when
 * enough of its offered GPUs of the model and memory asked are free, reserves them by index, and
 * otherwise declines saying why; a hostile request (absurd counts, long or odd model strings) is
 * dropped before anything is looked up.
 */
import assert from 'node:assert/strict'
import type { EngineCapabilities } from '../../../../dms/executor/engine.js'
import type { MachineInfo } from '../../../../dms/resources/types.js'
import type { GpuShare } from '../../../../dms/workload/workload.js'
import { Harness } from '../../../helpers/provider-harness.js'
import { plainNeeds } from '../../../helpers/needs.js'

const GiB = 1024 ** 3
const MiB = 1024 ** 2
const docker: EngineCapabilities = {
  name: 'docker',
  available: true,
  artifactKinds: ['image'],
  gpus: true,
  networkPolicies: ['none'],
  diskQuota: false,
  fetchesArtifacts: false,
}

describe('provider/handlers/bid-request: GPUs', () => {
  let h: Harness
  let handle: ReturnType<Harness['bidRequest']>
  beforeEach(async () => {
    h = await new Harness().start()
    const offer = h.ledger.getOffer()!
    await h.ledger.setOffer({ ...offer, resources: { ...offer.resources, gpus: 2 }, gpuIndices: [0, 1] })
    const info: MachineInfo = {
      cpu: { cores: 2, model: 't', arch: 'x64', speedGHz: 1 },
      memoryBytes: GiB,
      disk: { path: '/', totalBytes: GiB, freeBytes: GiB },
      gpus: [
        { index: 0, vendor: 'NVIDIA', model: 'NVIDIA H200', memoryBytes: 141 * GiB },
        { index: 1, vendor: 'NVIDIA', model: 'NVIDIA GeForce RTX 4090', memoryBytes: 24 * GiB },
      ],
      os: { platform: 'linux', distro: 'd', release: 'r', kernel: 'k' },
      engines: [docker],
      measuredAt: h.clock.now(),
    }
    handle = h.bidRequest({
      machine: { get: () => Promise.resolve(info), refresh: () => Promise.resolve(info) },
      requesterCap: { maxReservedShare: 1 },
    })
  })
  afterEach(() => h.close())

  /** A request for `gpus` (a plain job of 0.1 cpu). */
  const ask = async (jobId: string, gpus: GpuShare) => {
    const workloadNeeds = plainNeeds('dms-test:1', { cpu: 0.1, memoryBytes: 64 * MiB, gpus: gpus.count })
    workloadNeeds.members[0].resources.gpus = gpus
    await handle(h.msg({ ...h.request(jobId, 0.1), workloadNeeds }))
  }
  const reasons = (jobId: string) =>
    h.sent
      .filter((s) => s.behaviour === '/dms/job/decline')
      .map((s) => s.payload as { jobId: string; reasons: string[] })
      .find((d) => d.jobId === jobId)?.reasons

  it('bids for the model it has, holding that GPU by index; the next such job finds it taken', async () => {
    await ask('h200', { count: 1, model: 'H200' })
    assert.deepEqual(
      h.bids().map((b) => [b.jobId, b.resources.gpus]),
      [['h200', 1]],
    )
    assert.deepEqual(h.ledger.entries()[0].gpuIndices, [0])
    await ask('h200-again', { count: 1, model: 'nvidia h200' })
    assert.deepEqual(reasons('h200-again'), ['not enough gpus: need 1 that fit the job, free 0'])
    // Any GPU: the one left, not the H200 another bid holds.
    await ask('any', { count: 1 })
    assert.deepEqual(Object.fromEntries(h.ledger.entries().map((e) => [e.jobId, e.gpuIndices])), {
      h200: [0],
      any: [1],
    })
    assert.deepEqual(h.counts.declines, { 'not enough gpus': 1 })
  })

  it('declines more GPUs than it offers, and a model or memory it does not have', async () => {
    await ask('three', { count: 3 })
    await ask('h100', { count: 1, model: 'H100' })
    await ask('big', { count: 1, model: 'RTX 4090', minMemoryBytes: 48 * GiB })
    assert.deepEqual(reasons('three'), ['not enough gpus: need 3, offered 2'])
    assert.deepEqual(reasons('h100'), [
      'gpu model: need 1 GPU of model "H100"; offered here: 1 × NVIDIA H200 141 GiB, 1 × NVIDIA GeForce RTX 4090 24 GiB',
    ])
    assert.match(reasons('big')![0], /^gpu model: need 1 GPU of model "RTX 4090" with at least 48 GiB each;/)
    assert.deepEqual(h.bids(), [])
    assert.deepEqual(h.ledger.entries(), [])
    assert.deepEqual(h.counts.declines, { 'not enough gpus': 1, 'gpu model': 2 })
  })

  it('drops a hostile ask unanswered: absurd counts, long or odd model strings', async () => {
    await ask('many', { count: 1_000_000 })
    await ask('long', { count: 1, model: 'H'.repeat(129) })
    await ask('odd', { count: 1, model: 'H200\n\u001b[31mred' })
    await ask('neg', { count: 1, minMemoryBytes: -1 })
    await ask('huge', { count: 1, minMemoryBytes: 2 ** 60 })
    assert.deepEqual(h.sent, [], 'no bid, no decline')
    assert.deepEqual(h.counts.ignored, { malformed: 5 })
    assert.deepEqual(h.ledger.entries(), [])
  })
})
