/**
 * Real networks on 127.0.0.1 (real libp2p, real level, real Docker): a restarted provider is
 * re-dialled and bids again with no re-configuration; a provider nobody was told about is found
 * through the DHT and runs the job; a node with the wrong pre-shared key is refused, one with the
 * right key joins. The same, across network namespaces and a NAT: test/e2e/netns.spec.ts.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pino from 'pino'
import type { NodeConfig } from '../../../dms/config.js'
import { ContractDbNode } from '../../../dms/contract-db/node.js'
import type { DialEvent } from '../../../dms/network/dial-keeper.js'
import type { FoundEvent } from '../../../dms/network/discovery.js'
import { newSwarmKey } from '../../../dms/network/pnet.js'
import { DmsNode } from '../../../dms/node.js'
import { parseJobSpec } from '../../../dms/orchestrator/job-spec.js'
import { BID_REQUEST_TOPIC } from '../../../dms/protocol/handles.js'
import { approve, jobReaches, prices, TEST_IMAGE, TEST_PASSPHRASE } from '../../helpers/network.js'
import { freePort } from '../../helpers/processes.js'

const MiB = 1024 * 1024

const providerRole = (contractDb: string): NonNullable<NodeConfig['provider']> => ({
  contractDb,
  offer: { cpu: 1, memoryBytes: 512 * MiB, diskBytes: 1024 * MiB, gpus: 0, prices: prices(1000) },
})

const spec = () =>
  parseJobSpec({
    name: 'net',
    image: TEST_IMAGE,
    command: ['sh', '-c', 'echo over the network'],
    resources: { cpu: 0.5, memory: '64MiB' },
    maxDuration: 30,
    maxPrice: 10_000,
  })

/** Resolves with the first event `subscribe` reports that satisfies `test`. */
function first<E>(subscribe: (fn: (e: E) => void) => () => void, test: (e: E) => boolean): Promise<E> {
  return new Promise((resolve) => {
    const off = subscribe((e) => {
      if (test(e)) {
        off()
        resolve(e)
      }
    })
  })
}

describe('real networks on loopback: re-dial, DHT discovery, private networks', function () {
  this.timeout(60_000)
  let root: string
  const started: Array<{ stop(): Promise<void> }> = []
  let contractDb: ContractDbNode

  const node = async (name: string, cfg: Omit<NodeConfig, 'dataDir'>, log?: pino.Logger) => {
    const n = new DmsNode(
      { dataDir: join(root, name), oneHost: true, api: false, ...cfg },
      { passphrase: TEST_PASSPHRASE, log },
    )
    await n.start()
    started.push(n)
    return n
  }

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'dms-realnet-'))
  })
  afterEach(async () => {
    for (const n of started.splice(0).reverse()) await n.stop()
    await rm(root, { recursive: true, force: true })
  })

  const startContractDb = async (network?: NodeConfig['network']) => {
    contractDb = new ContractDbNode(
      { dataDir: join(root, 'contract-db'), oneHost: true, network },
      { passphrase: TEST_PASSPHRASE },
    )
    await contractDb.start()
    started.push(contractDb)
    return { peer: contractDb.peerId, addrs: contractDb.addrs() }
  }

  it('re-dials a restarted provider: it bids again with no re-configuration', async () => {
    const cdb = await startContractDb()
    const port = await freePort()
    const listen = [`/ip4/127.0.0.1/tcp/${port}`]
    const providerCfg = { listen, bootstrap: cdb.addrs, provider: providerRole(cdb.peer) }
    let provider = await node('provider', providerCfg)
    const requester = await node('requester', {
      bootstrap: [...cdb.addrs, ...provider.addrs()],
      requester: { contractDb: cdb, bidWindowMs: 3000 },
      network: { redial: { minBackoffMs: 200, maxBackoffMs: 1000 } },
    })
    for (const n of [provider, requester]) await approve(contractDb, n)
    await contractDb.service.credit(requester.peerId, 1_000_000)
    await requester.transport.waitForTopicPeers(BID_REQUEST_TOPIC, 1)

    // The provider dies; the requester's dials to it fail until it is back on the same address.
    const failed = first<DialEvent>(
      (fn) => requester.upkeep.keeper.onDial(fn),
      (e) => e.peer === provider.peerId && !e.ok,
    )
    await provider.stop()
    started.splice(started.indexOf(provider), 1)
    await failed
    const redialled = first<DialEvent>(
      (fn) => requester.upkeep.keeper.onDial(fn),
      (e) => e.peer === provider.peerId && e.ok,
    )
    provider = await node('provider', providerCfg)
    const e = await redialled
    assert.equal(e.kind, 'bootstrap')
    assert.ok(e.attempt >= 1, 'a re-dial, not the dial at start')

    await requester.transport.waitForTopicPeers(BID_REQUEST_TOPIC, 1)
    const job = await requester.orchestrator!.post(spec())
    const done = await jobReaches(requester, job.record.id)
    assert.equal(done.state, 'completed', JSON.stringify(done.record.error))
    assert.equal(done.record.winner?.provider, provider.peerId)
  })

  it('finds a provider it was never told about through the DHT, and the job completes', async () => {
    // The contract-db is the only address anyone is given; it serves the DHT.
    const dht = { mode: 'server' as const, privateAddresses: true, lookupIntervalMs: 1000 }
    const cdb = await startContractDb({ dht })
    const provider = await node('provider', {
      bootstrap: cdb.addrs,
      provider: providerRole(cdb.peer),
      network: { dht },
    })
    const requester = await node('requester', {
      bootstrap: cdb.addrs,
      requester: { contractDb: cdb, bidWindowMs: 3000 },
      network: { dht },
    })
    for (const n of [provider, requester]) await approve(contractDb, n)
    await contractDb.service.credit(requester.peerId, 1_000_000)
    assert.equal(
      requester.host.getConnections().filter((c) => c.remotePeer.equals(provider.host.peerId)).length,
      0,
    )

    const found = await first<FoundEvent>(
      (fn) => requester.upkeep.rendezvous!.onFound(fn),
      (e) => e.peer === provider.peerId && e.ok,
    )
    assert.equal(found.peer, provider.peerId)
    await requester.transport.waitForTopicPeers(BID_REQUEST_TOPIC, 1)
    const job = await requester.orchestrator!.post(spec())
    const done = await jobReaches(requester, job.record.id)
    assert.equal(done.state, 'completed', JSON.stringify(done.record.error))
  })

  it('private network: a node with the wrong key is refused (clear log line), the right key joins', async () => {
    const keyFile = join(root, 'swarm.key')
    const otherKey = join(root, 'other.key')
    await writeFile(keyFile, newSwarmKey())
    await writeFile(otherKey, newSwarmKey())
    const hub = await node('hub', { network: { pnet: { keyFile } } })
    const joined = await node('member', { bootstrap: hub.addrs(), network: { pnet: { keyFile } } })
    const lines: Array<Record<string, unknown>> = []
    const log = pino(
      { level: 'debug' },
      { write: (l: string) => lines.push(JSON.parse(l) as Record<string, unknown>) },
    )
    const stranger = await node(
      'stranger',
      { bootstrap: hub.addrs(), network: { pnet: { keyFile: otherKey }, redial: { minBackoffMs: 100 } } },
      log,
    )
    // It keeps trying (with backoff), and each try is refused.
    const refusedDial = first<DialEvent>(
      (fn) => stranger.upkeep.keeper.onDial(fn),
      (e) => !e.ok,
    )
    const e = await refusedDial
    assert.equal(e.peer, hub.peerId)
    assert.ok(
      lines.some((l) => /different pre-shared key/.test(String(l.msg))),
      `a clear log line, got: ${lines.map((l) => String(l.msg)).join(' | ')}`,
    )
    assert.equal(stranger.host.getConnections().length, 0)
    assert.equal(joined.host.getConnections(hub.host.peerId).length > 0, true, 'the right key joins')
    assert.equal(hub.host.getConnections().length, 1, 'the hub holds only the member')
  })
})
