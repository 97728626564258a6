/**
 * Bids and declines name the engine (specs/executor.md, "Engines"): a bid carries the engine
 * chosen from the machine's measured engines, under the provider's signature; with its engine down
 * the provider declines with `engine <name> unavailable`, its local why (a socket path, a script
 * to run) in its own log only, and measures again after 15 s, so it bids once the engine is back.
 */
import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { pino } from 'pino'
import { bidSignatureOk } from '../../../../dms/contracts/checks.js'
import type { EngineCapabilities } from '../../../../dms/executor/engine.js'
import type { MachineInfo } from '../../../../dms/resources/types.js'
import { Harness } from '../../../helpers/provider-harness.js'
import { plainNeeds } from '../../../helpers/needs.js'
import { needsOf } from '../../../../dms/workload/needs.js'
import { singleMemberOf } from '../../../../dms/workload/workload.js'

const docker: EngineCapabilities = {
  name: 'docker',
  version: '24.0',
  available: true,
  artifactKinds: ['image'],
  gpus: true,
  networkPolicies: ['none', 'open'],
  diskQuota: false,
  fetchesArtifacts: false,
}
const DOWN = 'connect ENOENT /var/run/docker.sock: run scripts/docker-bootstrap.sh to start it'

/** A measurement the test sets: `engines` now, stamped with the clock at each refresh. */
function meter(h: Harness, engines: EngineCapabilities[]) {
  const m = {
    engines,
    refreshes: 0,
    info: (): MachineInfo => ({
      cpu: { cores: 2, model: 't', arch: 'x64', speedGHz: 1 },
      memoryBytes: 1,
      disk: { path: '/', totalBytes: 1, freeBytes: 1 },
      gpus: [],
      os: { platform: 'linux', distro: 'd', release: 'r', kernel: 'k' },
      engines: m.engines,
      measuredAt: h.clock.now(),
    }),
    last: undefined as MachineInfo | undefined,
    get: () => Promise.resolve((m.last ??= m.info())),
    refresh: () => {
      m.refreshes++
      return Promise.resolve((m.last = m.info()))
    },
  }
  return m
}

describe('provider/handlers/bid-request: the engine', () => {
  let h: Harness
  beforeEach(async () => {
    h = await new Harness().start()
  })
  afterEach(() => h.close())

  it('names the chosen engine in the bid, under its signature', async () => {
    const handle = h.bidRequest({ machine: meter(h, [docker]) })
    await handle(h.msg(h.request('job-1', 0.5)))
    const [bid] = h.bids()
    assert.equal(bid.engine, 'docker')
    assert.equal(bidSignatureOk(bid), true)
    assert.equal(bidSignatureOk({ ...bid, engine: 'process' }), false, 'the engine is signed')
  })

  it('declines with "engine docker unavailable" (its why only in its own log), then bids once it is back', async () => {
    const lines: string[] = []
    const log = pino(
      new Writable({
        write(chunk: Buffer, _enc, done) {
          lines.push(chunk.toString())
          done()
        },
      }),
    )
    const m = meter(h, [{ ...docker, available: false, why: DOWN }])
    const handle = h.bidRequest({ machine: m, log })
    await handle(h.msg(h.request('job-1', 0.5)))
    await handle(h.msg(h.request('job-2', 0.5)))
    const declines = h.sent.filter((s) => s.behaviour === '/dms/job/decline')
    assert.deepEqual(
      declines.map((d) => (d.payload as { reasons: string[] }).reasons),
      [['engine docker unavailable'], ['engine docker unavailable']],
    )
    assert.doesNotMatch(JSON.stringify(declines), /sock|scripts|bootstrap/)
    assert.deepEqual(h.counts.declines, { 'engine unavailable': 2 })
    const told = lines.filter((l) => l.includes('engine unavailable'))
    assert.equal(told.length, 1, 'the why is logged once per measurement')
    assert.match(told[0], /docker-bootstrap\.sh/)
    assert.deepEqual(h.ledger.entries(), [])

    m.engines = [docker]
    await handle(h.msg(h.request('job-3', 0.5)))
    assert.equal(h.bids().length, 0, 'not measured again within 15 s')
    await h.clock.advanceAsync(15_000)
    await handle(h.msg(h.request('job-4', 0.5)))
    assert.deepEqual(
      h.bids().map((b) => [b.jobId, b.engine]),
      [['job-4', 'docker']],
    )
  })

  it('declines a job no offered engine can run, naming what it needs', async () => {
    const handle = h.bidRequest({ machine: meter(h, [{ ...docker, networkPolicies: ['none'] }]) })
    const workloadNeeds = plainNeeds('dms-test:1', { cpu: 0.5, memoryBytes: 64 * 1024 * 1024 }, true)
    await handle(h.msg({ ...h.request('job-1', 0.5), workloadNeeds }))
    const [decline] = h.sent
    assert.deepEqual((decline.payload as { reasons: string[] }).reasons, [
      'no engine here runs an image with a network',
    ])
    assert.deepEqual(h.counts.declines, { 'no engine': 1 })
  })

  it('a provider whose only engine is the process engine bids for a runtime, and declines an image', async () => {
    const process: EngineCapabilities = {
      name: 'process',
      available: true,
      artifactKinds: ['runtime'],
      runtimes: ['/bin/sh'],
      gpus: false,
      networkPolicies: ['none'],
      diskQuota: true,
      fetchesArtifacts: false,
    }
    const asked: string[] = []
    const handle = h.bidRequest({
      machine: meter(h, [process]),
      images: {
        refusal: () => undefined,
        canRun: (name) => {
          asked.push(name)
          return Promise.resolve(name === 'runtime:/bin/sh')
        },
      },
    })
    const r = { cpu: 0.5, memoryBytes: 64 * 1024 * 1024 }
    const needs = (artifact: string | { kind: 'runtime'; path: string }, network?: boolean) =>
      needsOf({
        members: [
          singleMemberOf(
            artifact,
            { command: ['/bin/sh'], env: {}, network },
            { ...r, diskBytes: 0, gpus: 0 },
          ),
        ],
      })
    await handle(
      h.msg({ ...h.request('rt', 0.5), workloadNeeds: needs({ kind: 'runtime', path: '/bin/sh' }) }),
    )
    await handle(h.msg({ ...h.request('img', 0.5), workloadNeeds: needs('dms-test:1') }))
    await handle(
      h.msg({ ...h.request('py', 0.5), workloadNeeds: needs({ kind: 'runtime', path: '/usr/bin/python3' }) }),
    )
    await handle(
      h.msg({ ...h.request('net', 0.5), workloadNeeds: needs({ kind: 'runtime', path: '/bin/sh' }, true) }),
    )
    assert.deepEqual(
      h.bids().map((b) => [b.jobId, b.engine, b.image]),
      [['rt', 'process', 'runtime:/bin/sh']],
    )
    const declines = h.sent
      .filter((s) => s.behaviour === '/dms/job/decline')
      .map((d) => d.payload as { jobId: string; reasons: string[] })
    assert.deepEqual(
      declines.map((d) => [d.jobId, d.reasons]),
      [
        ['img', ['no engine here runs an image']],
        ['py', ['runtime /usr/bin/python3 is not offered here']],
        ['net', ['no engine here runs a runtime with a network']],
      ],
    )
    assert.deepEqual(h.counts.declines, { 'no engine': 2, 'runtime not offered': 1 })
    assert.deepEqual(asked, ['runtime:/bin/sh', 'runtime:/usr/bin/python3'], 'only runtimes are looked up')
  })

  it('without a measurement, declines a runtime (only images were ever bid for so)', async () => {
    const handle = h.bidRequest({})
    const workloadNeeds = needsOf({
      members: [
        singleMemberOf(
          { kind: 'runtime', path: '/bin/sh' },
          { command: ['/bin/sh'], env: {} },
          { cpu: 0.5, memoryBytes: 64 * 1024 * 1024, diskBytes: 0, gpus: 0 },
        ),
      ],
    })
    await handle(h.msg({ ...h.request('rt', 0.5), workloadNeeds }))
    assert.deepEqual((h.sent[0].payload as { reasons: string[] }).reasons, ['no engine here runs a runtime'])
  })
})
