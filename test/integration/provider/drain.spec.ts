/**
 * A provider's lifecycle on a real network (contract-db, one provider, a requester on 127.0.0.1):
 * drained during a run, it finishes and settles that run and bids on nothing new; paused and
 * resumed; a graceful stop lets the run finish, and past its deadline cancels what is left. The
 * runs are held by a test executor (named as such) so they are in progress when the mode changes.
 */
import assert from 'node:assert/strict'
import { ApiClient } from '../../../dms/api/client.js'
import { HeldExecutor } from '../../helpers/held-executor.js'
import { jobReaches, startNetwork, type TestNetwork } from '../../helpers/network.js'

const MiB = 1024 * 1024
type Mode = { mode: string; since: number; liveBids: number }

const spec = {
  image: 'dms-test:1',
  command: ['true'],
  resources: { cpu: 0.1, memory: '8MiB', disk: '1MiB' },
  maxDuration: 60,
  maxPrice: 100_000,
}

describe('provider lifecycle: drain, pause, graceful stop', function () {
  this.timeout(60_000)
  let net: TestNetwork
  let executor: HeldExecutor
  let requester: ApiClient
  let provider: ApiClient

  beforeEach(async () => {
    executor = new HeldExecutor()
    net = await startNetwork([{ cpu: 2, memoryBytes: 512 * MiB, perCpuHour: 3_600_000 }], {
      components: { executor },
      requester: { bidWindowMs: 1000 },
    })
    const pubsub = net.requester.host.services.pubsub
    const outbound = (pubsub as unknown as { streamsOutbound: Map<string, unknown> }).streamsOutbound
    while (!outbound.has(net.providers[0].peerId))
      await new Promise((r) => pubsub.addEventListener('gossipsub:heartbeat', r, { once: true }))
    requester = new ApiClient(net.requester.socketPath!)
    provider = new ApiClient(net.providers[0].socketPath!)
  })
  afterEach(async () => net?.stop())

  const post = async () => (await requester.ok<{ id: string }>('POST', '/v1/jobs', spec)).id

  it('drained during a run: finishes and settles it, bids on nothing new, then is drained', async () => {
    const running = await post()
    await executor.runsStarted(1)
    const drain = await provider.call<Mode>('POST', '/v1/node/drain', {})
    assert.equal(drain.status, 202)
    assert.equal(drain.body.mode, 'draining')
    assert.ok(drain.body.liveBids >= 1)
    const info = await provider.ok<{ mode: Mode }>('GET', '/v1/info')
    assert.equal(info.mode.mode, 'draining')
    const metrics = (await provider.call<string>('GET', '/metrics')).body
    assert.match(String(metrics), /^dms_provider_mode\{mode="draining"\} 1$/m)

    const refused = await jobReaches(net.requester, await post())
    assert.equal(refused.state, 'failed')
    assert.equal(refused.record.error?.code, 'NO_BIDS')
    assert.deepEqual(
      refused.record.declines.map((d) => d.reasons),
      [['draining']],
    )
    executor.open()
    const done = await jobReaches(net.requester, running)
    assert.equal(done.state, 'completed')
    assert.equal(done.record.settlement?.outcome, 'settled')
    await net.providers[0].provider!.modes.drained()
    assert.equal((await provider.ok<Mode>('GET', '/v1/node/mode')).mode, 'drained')
    assert.equal(executor.started, 1, 'nothing new was run')
    const again = await provider.call<{ error: { code: string } }>('POST', '/v1/node/pause', {})
    assert.equal(again.status, 409)
    assert.equal(again.body.error.code, 'NODE_MODE_CONFLICT')

    assert.equal((await provider.ok<Mode>('POST', '/v1/node/resume', {})).mode, 'ready')
    assert.equal((await jobReaches(net.requester, await post())).state, 'completed', 'bids again')
  })

  it('paused: declines new jobs; a requester node has no mode (409 NOT_A_PROVIDER)', async () => {
    assert.equal((await provider.ok<Mode>('POST', '/v1/node/pause', {})).mode, 'paused')
    const refused = await jobReaches(net.requester, await post())
    assert.deepEqual(
      refused.record.declines.map((d) => d.reasons),
      [['paused']],
    )
    const none = await requester.call<{ error: { code: string } }>('POST', '/v1/node/drain', {})
    assert.equal(none.status, 409)
    assert.equal(none.body.error.code, 'NOT_A_PROVIDER')
  })

  it('a graceful stop lets the run finish and settle; past its deadline it cancels the rest', async () => {
    const first = await post()
    await executor.runsStarted(1)
    const p = net.providers[0]
    const finishing = p.provider!.finishWork(60_000)
    const refused = await jobReaches(net.requester, await post())
    assert.deepEqual(
      refused.record.declines.map((d) => d.reasons),
      [['stopping']],
    )
    executor.open()
    assert.equal(await finishing, 0, 'every run finished before the deadline')
    const done = await jobReaches(net.requester, first)
    assert.equal(done.state, 'completed')
    assert.equal(done.record.settlement?.outcome, 'settled')
  })

  it('a graceful stop whose deadline passes cancels the runs still going', async () => {
    await post()
    await executor.runsStarted(1)
    const p = net.providers[0]
    assert.equal(await p.provider!.finishWork(200), 1, 'one bid still live at the deadline')
    await p.stop()
    assert.equal(executor.cancelled, 1)
  })
})
