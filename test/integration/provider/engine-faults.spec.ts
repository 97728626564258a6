/**
 * Issue 13: a provider in its own process (`dms run`) whose engine answers image look-ups with a
 * redirect to a TCP address, to a closed port, to another scheme, a reset, or bytes that are not
 * HTTP. The engine is a stand-in (a real one redirects only paths that are not clean, which the
 * provider no longer sends). No request may leave the engine's socket, and the node must stay up:
 * it declines those jobs and still answers on its REST socket.
 */
import assert from 'node:assert/strict'
import { writeFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:net'
import { join } from 'node:path'
import { ApiClient } from '../../../dms/api/client.js'
import type { NodeConfig } from '../../../dms/config.js'
import { BID_REQUEST_TOPIC } from '../../../dms/protocol/handles.js'
import { parseJobSpec } from '../../../dms/orchestrator/job-spec.js'
import { startFakeEngine, type EngineAnswer, type FakeEngine } from '../../helpers/fake-engine.js'
import { jobReaches, prices, startNetwork, type TestNetwork } from '../../helpers/network.js'
import { freePort, peerIdOfDataDir, startDms, type DmsProcess } from '../../helpers/processes.js'

const MiB = 1024 * 1024

describe('provider process: a faulty engine cannot crash it or send it elsewhere', function () {
  this.timeout(90_000)
  let net: TestNetwork
  let engine: FakeEngine
  let trap: Server
  let trapped = 0
  let provider: DmsProcess | undefined
  let exitCode: unknown

  before(async () => {
    // Where a followed redirect would go: a listener that counts connections, and a closed port.
    trap = createServer((s) => {
      trapped++
      s.destroy()
    })
    await new Promise<void>((r) => trap.listen(0, '127.0.0.1', r))
    const trapPort = (trap.address() as { port: number }).port
    const closedPort = await freePort()
    const answers: Record<string, EngineAnswer> = {
      'redirect-tcp': { status: 301, headers: { location: `//127.0.0.1:${trapPort}/images/x/json` } },
      'redirect-closed': { status: 301, headers: { location: `http://127.0.0.1:${closedPort}/x` } },
      'redirect-scheme': { status: 302, headers: { location: 'gopher:x' } },
      reset: { reset: true },
      garbage: { garbage: 'HTTP/9.9 what\r\n\u0000\u0001 not http at all\r\n\r\n' },
    }
    engine = await startFakeEngine((method, path) => {
      if (path.startsWith('/containers/json')) return { status: 200, json: [] }
      const name = /^\/images\/([a-z-]+):1\/json$/.exec(path)?.[1]
      return (
        (name !== undefined ? answers[name] : undefined) ?? {
          status: 404,
          json: { message: 'no such image' },
        }
      )
    })
    net = await startNetwork([], { requester: { bidWindowMs: 1500, publishAttempts: 1 } })
    const dataDir = join(net.root, 'provider-proc')
    const config: NodeConfig = {
      dataDir,
      oneHost: true,
      bootstrap: [...net.contractDb.addrs(), ...net.requester.addrs()],
      provider: {
        contractDb: net.contractDb.peerId,
        offer: { cpu: 1, memoryBytes: 512 * MiB, diskBytes: 256 * MiB, gpus: 0, prices: prices(1000) },
        docker: { socketPath: engine.socketPath },
      },
    }
    const configPath = join(net.root, 'provider-proc.json')
    await writeFile(configPath, JSON.stringify(config))
    // Approved before it starts, so it has its approval credential from the start.
    await net.contractDb.service.approve(await peerIdOfDataDir(dataDir))
    provider = await startDms(configPath, 'warn')
    void provider.exited.then((code) => (exitCode = code))
    await net.requester.transport.waitForTopicPeers(BID_REQUEST_TOPIC, 1)
  })

  after(async () => {
    provider?.child.kill('SIGKILL')
    await provider?.exited
    await net?.stop()
    await engine?.stop()
    await new Promise((r) => trap?.close(r))
  })

  it('declines each job, stays up, answers /v1/health, and no request left the socket', async () => {
    const images = ['redirect-tcp', 'redirect-closed', 'redirect-scheme', 'reset', 'garbage']
    for (const name of images) {
      const job = await net.requester.orchestrator!.post(
        parseJobSpec({
          image: `${name}:1`,
          command: ['sh', '-c', ':'],
          resources: { cpu: 0.5, memory: '64MiB' },
          maxDuration: 60,
          maxPrice: 10_000,
        }),
      )
      const ended = await jobReaches(net.requester, job.record.id, ['failed', 'completed'])
      assert.equal(exitCode, undefined, `the provider process exited after ${name}`)
      assert.equal(ended.record.error?.code, 'NO_BIDS', name)
      assert.deepEqual(
        ended.record.error?.declines?.map((d) => d.reasons),
        [[`image ${name}:1 is not available on this provider`]],
        name,
      )
      assert.ok(engine.requests.includes(`GET /images/${name}:1/json`), `the engine was asked about ${name}`)
    }
    assert.equal(trapped, 0, 'a request followed a redirect off the socket')
    const api = new ApiClient(provider!.socket!)
    assert.deepEqual(await api.ok('GET', '/v1/health'), { ok: true })
    const metrics = (await api.raw('GET', '/metrics')).body.toString()
    assert.match(metrics, /^# TYPE dms_process_faults_total counter$/m)
    // The guard is there, and had nothing to catch: the modem itself never failed this way.
    assert.match(metrics, /^dms_process_faults_total\{kind="uncaughtException"\} 0$/m)
    assert.match(metrics, /^dms_process_faults_total\{kind="unhandledRejection"\} 0$/m)
    assert.match(metrics, /^dms_provider_declines_total\{reason="image not available"\} 5$/m)
    assert.equal(exitCode, undefined)
  })
})
