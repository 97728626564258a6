import assert from 'node:assert/strict'
import { ConfigError, loadContractDbConfig, loadNodeConfig } from '../../../dms/config.js'

const CDB = '12D3KooWJQrvaMvVy9RQ6bN3CXC7V2ju9SCjisqSYshAjur2e6f4'

function refused(file: unknown, env: Record<string, string> = {}): ConfigError {
  try {
    loadNodeConfig(file, env, 'config c.json')
  } catch (err) {
    assert.ok(err instanceof ConfigError, `not a ConfigError: ${String(err)}`)
    return err
  }
  assert.fail('accepted')
}

describe('node config: schema and DMS_* overrides', () => {
  it("takes a Docker-API engine's log driver and ulimits, and refuses others", () => {
    const docker = (d: unknown) => ({ dataDir: 'd', provider: { contractDb: CDB, docker: d } })
    const ok = loadNodeConfig(
      docker({ logDriver: 'k8s-file', ulimits: [{ name: 'nofile', soft: 1024, hard: 1024 }] }),
      {},
      'c',
    )
    assert.equal(ok.provider?.docker?.logDriver, 'k8s-file')
    assert.deepEqual(ok.provider?.docker?.ulimits, [{ name: 'nofile', soft: 1024, hard: 1024 }])
    assert.equal(refused(docker({ logDriver: 'syslog' })).field, 'provider.docker.logDriver')
    assert.match(
      refused(docker({ ulimits: [{ name: 'nofiles', soft: 1, hard: 1 }] })).field,
      /provider\.docker\.ulimits/,
    )
    assert.match(
      refused(docker({ ulimits: [{ name: 'nofile', soft: -5, hard: 1 }] })).field,
      /provider\.docker\.ulimits/,
    )
  })

  it('accepts a full provider + requester config unchanged', () => {
    const file = {
      dataDir: '/var/lib/dms',
      listen: ['/ip4/0.0.0.0/tcp/4002'],
      bootstrap: [],
      oneHost: false,
      log: { level: 'debug' },
      network: { connections: { maxConnections: 50 }, gossipsub: { D: 4 }, mdns: { intervalMs: 1000 } },
      api: { socket: '/run/dms.sock', tcp: { port: 8080 } },
      requester: { contractDb: { peer: CDB, addrs: ['/ip4/10.0.0.1/tcp/4001'] }, bidWindowMs: 3000 },
      provider: {
        contractDb: CDB,
        offer: {
          cpu: 2,
          memoryBytes: 1024,
          diskBytes: 0,
          gpus: 0,
          prices: { perCpuHour: 1, perGiBMemoryHour: 1, perGiBDiskHour: 0, perGpuHour: 0, minJobPrice: 1 },
        },
        allowedImages: ['dms-test:*'],
        maxOutputBytes: 1024 * 1024,
        defaultDiskBytes: 64 * 1024 * 1024,
      },
    }
    assert.deepEqual(loadNodeConfig(file), file)
    assert.deepEqual(loadNodeConfig({ dataDir: 'd', api: false }), { dataDir: 'd', api: false })
  })

  it('names an unknown field, at any depth', () => {
    assert.equal(refused({ dataDir: 'd', bogus: 1 }).message, 'config c.json: "bogus": unknown field')
    const e = refused({ dataDir: 'd', provider: { contractDb: CDB, docker: { sockPath: '/x' } } })
    assert.equal(e.field, 'provider.docker.sockPath')
    assert.match(e.message, /"provider\.docker\.sockPath": unknown field/)
  })

  it('names a bad value and what it must be', () => {
    assert.equal(refused({ dataDir: 'd', api: { tcp: { port: 'x' } } }).field, 'api.tcp.port')
    assert.match(
      refused({ dataDir: 'd', api: { tcp: { port: 70000 } } }).message,
      /"api\.tcp\.port": must be <= 65535/,
    )
    assert.match(
      refused({ dataDir: 'd', api: { tcp: { host: '0.0.0.0', port: 1 } } }).message,
      /"api\.tcp\.host": must be one of "127\.0\.0\.1", "::1"/,
    )
    assert.match(
      refused({ dataDir: 'd', network: { mdns: { foo: 1 } } }).message,
      /"network\.mdns\.foo": unknown field/,
    )
    assert.match(
      refused({ dataDir: 'd', provider: { contractDb: 'not-a-peer' } }).message,
      /"provider\.contractDb": must match pattern/,
    )
    assert.match(refused({ dataDir: 'd', provider: {} }).message, /"provider\.contractDb": is required/)
    assert.match(
      refused({ dataDir: 'd', provider: { contractDb: CDB, defaultDiskBytes: 1024 } }).message,
      /"provider\.defaultDiskBytes": must be >= 8388608/,
    )
    assert.match(refused({}).message, /"dataDir": is required/)
    assert.match(refused([]).message, /must be a JSON object/)
  })

  it('network hardening settings: frame deadline, unfinished-bytes budgets, gossip score', () => {
    const network = {
      frameReadTimeoutMs: 5000,
      maxUnfinishedBytesPerConnection: 8 * 1024 * 1024,
      maxUnfinishedBytes: 64 * 1024 * 1024,
      gossipsub: { score: { invalidMessageWeight: -5, invalidMessageDecay: 0.5, graylistThreshold: -200 } },
    }
    assert.deepEqual(loadNodeConfig({ dataDir: 'd', network }).network, network)
    assert.equal(
      refused({ dataDir: 'd', network: { frameReadTimeoutMs: 0 } }).field,
      'network.frameReadTimeoutMs',
    )
    const score = (s: Record<string, number>) => ({ dataDir: 'd', network: { gossipsub: { score: s } } })
    assert.match(refused(score({ invalidMessageWeight: 1 })).message, /invalidMessageWeight": must be <= 0/)
    assert.match(refused(score({ invalidMessageDecay: 1 })).message, /invalidMessageDecay": must be < 1/)
    const order = refused(score({ publishThreshold: -100 }))
    assert.equal(order.field, 'network.gossipsub.score.graylistThreshold')
    assert.match(
      order.message,
      /"network\.gossipsub\.score\.graylistThreshold" \(-80\): must be <= publishThreshold \(-100\)/,
    )
    assert.equal(refused(score({ gossipThreshold: -60 })).field, 'network.gossipsub.score.publishThreshold')
  })

  it('real network settings: re-dial, DHT, relay, NAT, private network, announce', () => {
    const network = {
      redial: { minBackoffMs: 200, maxBackoffMs: 5000, maxKnownPeers: 10, forgetAfterMs: 60_000 },
      dht: { mode: 'client' as const, kBucketSize: 10, lookupIntervalMs: 2000 },
      relay: {
        serve: true,
        contractDb: CDB,
        maxReservations: 8,
        maxReservationsPerAddress: 2,
        providerShare: 0.25,
        durationLimitMs: 0,
        dataLimitBytes: 0,
        peerDataLimitBytes: 1024,
        peerDataWindowMs: 60_000,
        maxCircuitsPerPeer: 4,
        reserve: false,
      },
      nat: { autonat: false, holePunching: true },
      pnet: { keyFile: '/etc/dms/swarm.key' },
      announce: ['/ip4/203.0.113.7/tcp/4001'],
    }
    assert.deepEqual(loadNodeConfig({ dataDir: 'd', network }).network, network)
    const bad = (n: unknown) => refused({ dataDir: 'd', network: n })
    assert.match(
      bad({ dht: { mode: 'peer' } }).message,
      /"network\.dht\.mode": must be one of "server", "client", "auto"/,
    )
    assert.equal(bad({ dht: { kBucketSize: 1000 } }).field, 'network.dht.kBucketSize')
    assert.equal(bad({ dht: { lookupIntervalMs: 10 } }).field, 'network.dht.lookupIntervalMs')
    assert.equal(bad({ relay: { maxReservations: 0 } }).field, 'network.relay.maxReservations')
    assert.equal(bad({ relay: { providerShare: 1.5 } }).field, 'network.relay.providerShare')
    assert.equal(
      bad({ relay: { maxReservationsPerAddress: 0 } }).field,
      'network.relay.maxReservationsPerAddress',
    )
    assert.equal(bad({ relay: { contractDb: 'not-a-peer' } }).field, 'network.relay.contractDb')
    assert.equal(bad({ redial: { minBackoffMs: 0 } }).field, 'network.redial.minBackoffMs')
    assert.equal(bad({ pnet: {} }).field, 'network.pnet.keyFile')
  })

  it('metrics: a listener of its own; a short token, a missing port or an unknown field is refused', () => {
    const metrics = { host: '0.0.0.0', port: 9464, token: 'a'.repeat(32), public: true }
    assert.deepEqual(loadNodeConfig({ dataDir: 'd', metrics }).metrics, metrics)
    assert.match(refused({ dataDir: 'd', metrics: { port: 9464, token: 'short' } }).message, /metrics\.token/)
    assert.match(refused({ dataDir: 'd', metrics: { host: '127.0.0.1' } }).message, /metrics.*port/)
    assert.match(refused({ dataDir: 'd', metrics: { port: 1, allowAll: true } }).message, /metrics\.allowAll/)
    assert.deepEqual(loadContractDbConfig({ metrics: { port: 0 } }).metrics, { port: 0 })
    assert.throws(() => loadContractDbConfig({ metrics: { port: 70_000 } }), /metrics\.port/)
  })

  it('requester bid window settings', () => {
    const requester = { contractDb: { peer: CDB, addrs: [] }, bidSilentAfter: 5, bidStragglerMs: 0 }
    assert.deepEqual(loadNodeConfig({ dataDir: 'd', requester }).requester, requester)
    assert.equal(
      refused({ dataDir: 'd', requester: { ...requester, bidSilentAfter: 0 } }).field,
      'requester.bidSilentAfter',
    )
  })

  it('DMS_* variables override the file, and a bad one is named', () => {
    const cfg = loadNodeConfig(
      { dataDir: 'from-file', listen: ['/ip4/127.0.0.1/tcp/1'], api: { socket: 's' } },
      {
        DMS_DATA_DIR: '/env/dir',
        DMS_LISTEN: '/ip4/127.0.0.1/tcp/2, /ip4/127.0.0.1/tcp/3',
        DMS_ONE_HOST: 'true',
        DMS_LOG_LEVEL: 'warn',
        DMS_API_PORT: '0',
        DMS_API_TOKEN: 'a-token-of-sixteen-chars',
        DMS_UNRELATED: 'x',
      },
    )
    assert.deepEqual(cfg, {
      dataDir: '/env/dir',
      listen: ['/ip4/127.0.0.1/tcp/2', '/ip4/127.0.0.1/tcp/3'],
      oneHost: true,
      log: { level: 'warn' },
      api: { socket: 's', tcp: { port: 0, token: 'a-token-of-sixteen-chars' } },
    })
    assert.equal(loadNodeConfig({}, { DMS_DATA_DIR: '/only/env' }).dataDir, '/only/env')
    assert.equal(
      refused({ dataDir: 'd' }, { DMS_LOG_LEVEL: 'loud' }).message,
      'config c.json: "log.level" (from DMS_LOG_LEVEL): must be one of "trace", "debug", "info", "warn", "error", "fatal", "silent"',
    )
    assert.match(
      refused({ dataDir: 'd' }, { DMS_API_PORT: 'abc' }).message,
      /DMS_API_PORT=abc: must be a whole number/,
    )
    assert.match(refused({ dataDir: 'd' }, { DMS_ONE_HOST: 'maybe' }).message, /DMS_ONE_HOST=maybe/)
    assert.match(refused({ dataDir: 'd', api: false }, { DMS_API_PORT: '1' }).message, /"api": false/)
    assert.match(
      refused({ dataDir: 'd' }, { DMS_API_TOKEN: 'a-token-of-sixteen-chars' }).message,
      /"api\.tcp\.port": is required/,
    )
  })

  it('does not change the file object it was given', () => {
    const file = { dataDir: 'd' }
    loadNodeConfig(file, { DMS_LOG_LEVEL: 'debug' })
    assert.deepEqual(file, { dataDir: 'd' })
  })
})

describe('contract-db config file', () => {
  it('takes the deadline settings specs/config.md lists (they were refused as unknown fields)', () => {
    const file = {
      dataDir: 'd',
      maxActiveVolunteerContracts: 4,
      settleGraceMs: 2000,
      claimWindowMs: 5000,
      disputeWindowMs: 60_000,
      expirySweepMs: 1000,
    }
    assert.deepEqual(loadContractDbConfig(file), file)
    assert.throws(() => loadContractDbConfig({ expirySweepMs: 0 }), /expirySweepMs/)
  })
})
