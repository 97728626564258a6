/**
 * The shape of a node's config, declared once (TypeBox): the ajv check of `loadNodeConfig`, the
 * `NodeConfig` type and the field list of specs/config.md. Where a section or field is a
 * component's own option, its type is that component's (`OrchestratorInit`, `ProviderInit`'s
 * `requesterCap`, `NetworkInit`'s `gossipsub`...), checked against the schema when compiled.
 */
import { MAX_WORKFLOW_TASKS } from './workflows/document.js'
import { MAX_START_GRACE_SECONDS } from './contracts/start.js'
import { Type, type Static, type TSchema } from '@sinclair/typebox'
import type { MailboxInit } from '../actors/mailbox.js'
import type { DialKeeperInit } from './network/dial-keeper.js'
import type { DhtInit } from './network/discovery.js'
import type { ConnectionLimits, GossipSettings, NetworkInit } from './network/host.js'
import type { NatInit, RelayInit } from './network/nat.js'
import type { GossipScoreSettings } from './network/gossip-score.js'
import type { OrchestratorInit } from './orchestrator/orchestrator.js'
import type { ProviderInit } from './provider/provider.js'
import type { Prices } from './resources/types.js'
import { CURRENCY, MAX_PRICE, TIME_UNIT_MS, type PriceTerms, type TimeUnit } from './pricing/terms.js'
import { StringEnum, strictObject as obj, typed } from './schema.js'
import { LOG_DRIVERS, MAX_ULIMITS, ULIMIT_NAMES } from './executor/docker/engine-profile.js'
import type { MetricsListenerConfig } from './metrics/listener.js'
import { ENGINE_NAMES } from './executor/engine.js'
import { RUNTIME_PATH_MAX_LENGTH, RUNTIME_PATH_PATTERN } from './workload/workload.js'

/** Log levels accepted by `log.level` and `DMS_LOG_LEVEL`. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const

const nonNegInt = Type.Integer({ minimum: 0 })
const posInt = Type.Integer({ minimum: 1 })
const nonNeg = Type.Number({ minimum: 0 })
const nonPos = Type.Number({ maximum: 0 })
const str = Type.String({ minLength: 1 })
const strings = Type.Array(str)
const peerId = Type.String({ pattern: '^[1-9A-HJ-NP-Za-km-z]{46,60}$' })
const opt = <T extends TSchema>(schema: T) => Type.Optional(schema)

const score = typed<GossipScoreSettings>()(
  obj({
    topicWeight: opt(nonNeg),
    invalidMessageWeight: opt(nonPos),
    invalidMessageDecay: opt(Type.Number({ exclusiveMinimum: 0, exclusiveMaximum: 1 })),
    gossipThreshold: opt(nonPos),
    publishThreshold: opt(nonPos),
    graylistThreshold: opt(nonPos),
  }),
)

/** `network`: discovery, connection limits, gossipsub, frame and mailbox limits (specs/config.md). */
export const networkSchema = obj({
  connections: opt(
    typed<ConnectionLimits>()(
      obj({
        maxConnections: opt(posInt),
        inboundConnectionThreshold: opt(nonNeg),
        maxIncomingPendingConnections: opt(posInt),
        maxParallelDials: opt(posInt),
      }),
    ),
  ),
  gossipsub: opt(
    typed<GossipSettings>()(
      obj({
        D: opt(nonNegInt),
        Dlo: opt(nonNegInt),
        Dhi: opt(nonNegInt),
        Dlazy: opt(nonNegInt),
        heartbeatIntervalMs: opt(posInt),
        floodPublish: opt(Type.Boolean()),
        ipColocationFactorWeight: opt(nonPos),
        score: opt(score),
      }),
    ),
  ),
  mdns: opt(
    typed<NetworkInit['mdns'] & {}>()(
      Type.Union([Type.Boolean(), obj({ intervalMs: opt(posInt), serviceTag: opt(str) })]),
    ),
  ),
  /** Re-dialling of bootstrap and known peers after a failed dial or a disconnect. */
  redial: opt(
    typed<Omit<DialKeeperInit, 'bootstrap'>>()(
      obj({
        minBackoffMs: opt(posInt),
        maxBackoffMs: opt(posInt),
        maxKnownPeers: opt(Type.Integer({ minimum: 0, maximum: 10_000 })),
        forgetAfterMs: opt(posInt),
        dialTimeoutMs: opt(posInt),
      }),
    ),
  ),
  /** The kad-dht (peer routing and the providers rendezvous). Unset: no DHT. */
  dht: opt(
    typed<DhtInit>()(
      obj({
        mode: opt(StringEnum(['server', 'client', 'auto'])),
        kBucketSize: opt(Type.Integer({ minimum: 1, maximum: 100 })),
        prefixLength: opt(Type.Integer({ minimum: 1, maximum: 16 })),
        privateAddresses: opt(Type.Boolean()),
        lookupIntervalMs: opt(Type.Integer({ minimum: 1000 })),
        maxDialsPerLookup: opt(Type.Integer({ minimum: 0, maximum: 1000 })),
      }),
    ),
  ),
  /** Circuit relay v2: serve as a relay for approved peers (with limits), reserve a slot on one (behind NAT). */
  relay: opt(
    typed<RelayInit>()(
      obj({
        serve: opt(Type.Boolean()),
        contractDb: opt(peerId),
        maxReservations: opt(Type.Integer({ minimum: 1, maximum: 10_000 })),
        maxReservationsPerAddress: opt(Type.Integer({ minimum: 1, maximum: 10_000 })),
        providerShare: opt(Type.Number({ minimum: 0, maximum: 1 })),
        durationLimitMs: opt(nonNegInt),
        dataLimitBytes: opt(nonNegInt),
        peerDataLimitBytes: opt(nonNegInt),
        peerDataWindowMs: opt(posInt),
        maxCircuitsPerPeer: opt(nonNegInt),
        reserve: opt(Type.Boolean()),
      }),
    ),
  ),
  /** AutoNAT and DCUtR hole punching. @default both true */
  nat: opt(typed<NatInit>()(obj({ autonat: opt(Type.Boolean()), holePunching: opt(Type.Boolean()) }))),
  /** A private network: every peer must hold the same swarm key file (`dms swarm-key`). */
  pnet: opt(obj({ keyFile: str })),
  /** Addresses announced to peers instead of the listen addresses. */
  announce: opt(strings),
  /** Largest frame (envelope) accepted, on streams and gossip. @default 4194304 */
  maxFrameBytes: opt(Type.Integer({ minimum: 1024 })),
  /** Longest a direct frame may take from its first byte to its last. @default 30000 */
  frameReadTimeoutMs: opt(posInt),
  /** Bytes of unfinished direct frames one connection may hold. @default 2 × maxFrameBytes */
  maxUnfinishedBytesPerConnection: opt(Type.Integer({ minimum: 1024 })),
  /** Bytes of unfinished direct frames all connections together may hold. @default 8 × maxFrameBytes */
  maxUnfinishedBytes: opt(Type.Integer({ minimum: 1024 })),
  /** Default mailbox of each actor. @default { capacity: 1024, overflow: 'drop-newest' } */
  mailbox: opt(
    typed<MailboxInit>()(
      obj({ capacity: opt(posInt), overflow: opt(StringEnum(['drop-newest', 'drop-oldest'])) }),
    ),
  ),
})

/** `api`: the REST API's unix socket and optional loopback TCP listener (specs/rest-api.md). */
export const apiSchema = obj({
  /** @default '<dataDir>/dms.sock' */
  socket: opt(str),
  /** An extra TCP listener; every request must carry `authorization: Bearer <token>`. */
  tcp: opt(
    obj({
      /** Loopback only. @default '127.0.0.1' */
      host: opt(StringEnum(['127.0.0.1', '::1'])),
      /** 0 picks a free port. */
      port: Type.Integer({ minimum: 0, maximum: 65535 }),
      /** @default a random token generated into '<dataDir>/api-token' (mode 0600) */
      token: opt(Type.String({ minLength: 16 })),
    }),
  ),
  /** `PUT /v1/blobs` that receives no byte for this long is dropped (408). @default 30000 */
  uploadIdleMs: opt(Type.Integer({ minimum: 100, maximum: 3_600_000 })),
  /** Temp bytes all uploads in progress may hold together (503 past it). @default 2 GiB */
  uploadsMaxBytes: opt(Type.Integer({ minimum: 1024 * 1024, maximum: 1024 ** 4 })),
})

/**
 * `metrics`: a TCP listener of its own serving `GET /metrics` only, to a read-only bearer token
 * of its own (specs/rest-api.md, "Metrics listener"); the same for a node and a contract-db.
 */
export const metricsSchema = typed<MetricsListenerConfig>()(
  obj({
    /** An IP address; one that is not loopback needs `public: true`. @default '127.0.0.1' */
    host: opt(Type.String({ minLength: 2, maxLength: 45 })),
    /** 0 picks a free port (9464 is the usual one for an exporter). */
    port: Type.Integer({ minimum: 0, maximum: 65535 }),
    /** @default a random token generated into '<dataDir>/metrics-token' (mode 0600) */
    token: opt(Type.String({ minLength: 16, maxLength: 256 })),
    /** Serve on an address that is not loopback (0.0.0.0, a LAN address). @default false */
    public: opt(Type.Boolean()),
  }),
)

/** `requester`: the Orchestrator's own options (`OrchestratorInit`). */
export const requesterSchema = typed<OrchestratorInit>()(
  obj({
    contractDb: obj({ peer: peerId, addrs: strings }),
    bidWindowMs: opt(nonNegInt),
    enoughBids: opt(posInt),
    bidSample: opt(Type.Integer({ minimum: 0, maximum: 10_000 })),
    resultGraceMs: opt(nonNegInt),
    requestTimeoutMs: opt(posInt),
    settleAttempts: opt(posInt),
    publishAttempts: opt(posInt),
    livenessTimeoutMs: opt(posInt),
    bidSilentAfter: opt(posInt),
    bidStragglerMs: opt(nonNegInt),
    outputsMinBytesPerSecond: opt(posInt),
    outputsFetchGraceMs: opt(nonNegInt),
    queueTimeoutSeconds: opt(Type.Integer({ minimum: 0, maximum: 604800 })),
    queueRetryMinMs: opt(posInt),
    queueRetryMaxMs: opt(posInt),
    queueIdleExpirySeconds: opt(posInt),
    retention: opt(obj({ maxAgeDays: opt(posInt), keepLast: opt(nonNegInt) })),
    maxWorkflowTasks: opt(Type.Integer({ minimum: 1, maximum: MAX_WORKFLOW_TASKS })),
    startGraceSeconds: opt(Type.Integer({ minimum: 1, maximum: MAX_START_GRACE_SECONDS })),
  }),
)

type Preferences = NonNullable<ProviderInit['preferences']>
const preference = <K extends keyof Preferences>(_: K) => typed<Preferences[K] & {}>()

const pricesSchema = typed<Prices>()(
  obj({
    perCpuHour: nonNegInt,
    perGiBMemoryHour: nonNegInt,
    perGiBDiskHour: nonNegInt,
    perGpuHour: nonNegInt,
    minJobPrice: nonNegInt,
  }),
)

const priceAmount = Type.Integer({ minimum: 0, maximum: MAX_PRICE })

/**
 * `provider.price`: the price terms this provider bids, one object per model (specs/pricing.md).
 * Amounts are micro-tokens; the currency is `micro-token`.
 */
const priceSchema = typed<PriceTerms>()(
  Type.Union([
    obj({
      model: Type.Literal('per-time'),
      unit: StringEnum(Object.keys(TIME_UNIT_MS) as TimeUnit[]),
      currency: Type.Literal(CURRENCY),
      rate: priceAmount,
      minimum: priceAmount,
    }),
    obj({ model: Type.Literal('per-result'), currency: Type.Literal(CURRENCY), amount: priceAmount }),
    obj({ model: Type.Literal('fixed'), currency: Type.Literal(CURRENCY), amount: priceAmount }),
  ]),
)

/**
 * `provider`: the ProviderService's options (`ProviderInit`, its `preferences` flattened), the
 * Docker executor's, and the initial offer.
 */
export const providerSchema = obj({
  contractDb: peerId,
  /**
   * Where to reach the contract-db (its approval credential, start notes, claims):
   * with several instances, each one's addresses (specs/contract-db.md). @default the
   * requester's `contractDb.addrs` when it names the same peer, else the `bootstrap` entries
   * ending in `/p2p/<contractDb>` (else it is dialed by peer id through the peer store)
   */
  contractDbAddrs: opt(strings),
  /**
   * Initial offer, applied only when nothing is onboarded yet (no offer in the database). Once
   * onboarded, `dms onboard` / `dms offboard` change the stored offer and this is ignored.
   */
  offer: opt(
    obj({ cpu: nonNeg, memoryBytes: nonNegInt, diskBytes: nonNegInt, gpus: nonNegInt, prices: pricesSchema }),
  ),
  /**
   * The engines this provider offers (specs/executor.md, "Engines"): each is measured, shown by
   * `dms resources`, and a job is bid for and run on the first one, in this order, that runs its
   * artifact: `docker` (images), `process` (runtimes, in Linux namespaces: for hosts without a
   * Docker engine). @default ["docker"]
   */
  engines: opt(Type.Array(StringEnum(ENGINE_NAMES), { minItems: 1, maxItems: 8, uniqueItems: true })),
  /** The process engine's settings (specs/executor.md, "The process engine"), when `engines` names it. */
  process: opt(
    obj({
      /**
       * The programs a job may run (`runtime` artifacts), by absolute path; a job's command starts
       * with one. @default ["/bin/sh", "/usr/bin/python3"]
       */
      runtimes: opt(
        Type.Array(
          Type.String({ minLength: 2, maxLength: RUNTIME_PATH_MAX_LENGTH, pattern: RUNTIME_PATH_PATTERN }),
          { minItems: 1, maxItems: 64, uniqueItems: true },
        ),
      ),
      /**
       * Host paths bound read-only at the same place in every sandbox (absent ones are skipped).
       * @default ["/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/etc/ssl", "/etc/alternatives"]
       */
      binds: opt(
        Type.Array(Type.String({ minLength: 2, maxLength: 1024, pattern: RUNTIME_PATH_PATTERN }), {
          maxItems: 64,
          uniqueItems: true,
        }),
      ),
    }),
  ),
  /** Docker engine and executor settings (specs/executor.md). */
  docker: opt(
    obj({
      socketPath: opt(str),
      pullImages: opt(Type.Boolean()),
      diskQuota: opt(Type.Boolean()),
      /**
       * Registries whose images are looked up or pulled; a job naming another is declined before
       * the engine is asked. @default ["docker.io"] (images named without a registry)
       */
      registries: opt(
        typed<NonNullable<NonNullable<ProviderInit['images']>['registries']>>()(
          Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: 256 }),
        ),
      ),
      /**
       * The log driver the engine keeps each container's output with (specs/executor.md,
       * "Docker-API engines"); podman refuses `local`: `k8s-file` there. @default "local"
       */
      logDriver: opt(StringEnum(LOG_DRIVERS)),
      /**
       * Resource limits set in every container, e.g. `[{ "name": "nofile", "soft": 1024, "hard": 1024 }]`
       * for an engine whose defaults exceed the host's. @default [] (the engine's defaults)
       */
      ulimits: opt(
        Type.Array(
          obj({
            name: StringEnum(ULIMIT_NAMES),
            soft: Type.Integer({ minimum: -1, maximum: Number.MAX_SAFE_INTEGER }),
            hard: Type.Integer({ minimum: -1, maximum: Number.MAX_SAFE_INTEGER }),
          }),
          { maxItems: MAX_ULIMITS },
        ),
      ),
    }),
  ),
  allowedImages: opt(preference('allowedImages')(strings)),
  /** Take jobs whose spec asks for `network` (their containers get a bridge network). @default false */
  allowNetwork: opt(Type.Boolean()),
  /** Largest total of a job's output files (archived and fetched by the requester). @default 268435456 (256 MiB) */
  maxOutputBytes: opt(posInt),
  /**
   * Disk quota on /outputs of a job that gives no `disk`, capped at the offer's free disk; held in
   * the ledger like a job's own disk (specs/resources.md). At least 8 MiB. @default 268435456 (256 MiB)
   */
  defaultDiskBytes: opt(Type.Integer({ minimum: 8 * 1024 * 1024 })),
  /** A requester with more unpaid or claimed jobs here is declined (specs/provider-books.md). @default no limit */
  maxUnpaidJobs: opt(nonNegInt),
  /**
   * The price this provider bids, whatever the job's resources (specs/pricing.md): e.g.
   * `{ "model": "per-time", "unit": "minute", "currency": "micro-token", "rate": 50, "minimum": 0 }`,
   * or a fixed price paid on a verified result:
   * `{ "model": "per-result", "currency": "micro-token", "amount": 500 }`, or a fixed price for the
   * run within its time, whatever its exit: `{ "model": "fixed", "currency": "micro-token", "amount": 500 }`
   * (`dms onboard --price-per-result` / `--price-fixed` write it).
   * @default per hour at the onboarded offer's prices (`dms onboard`)
   */
  price: opt(priceSchema),
  /** Bid for a later start when a job does not fit now (specs/queueing.md, "Later starts"). @default false */
  laterBids: opt(Type.Boolean()),
  /** How far ahead a later start may be, in seconds (at most a day). @default 600 */
  maxStartAheadSeconds: opt(Type.Integer({ minimum: 1, maximum: 86_400 })),
  /** How often contracts past their settleBy without a settlement are claimed. @default 60000 */
  claimSweepMs: opt(posInt),
  /** How long an output archive is kept after its contract's settlement. @default 86400000 */
  outputsKeepMs: opt(Type.Integer({ minimum: 0, maximum: 30 * 24 * 3_600_000 })),
  /** Bytes of output archives kept per requester. @default 4294967296 */
  outputsBytesPerRequester: opt(Type.Integer({ minimum: 0, maximum: 1024 ** 5 })),
  maxDurationSeconds: opt(posInt),
  /**
   * A graceful stop (`dms run` on SIGTERM/SIGINT) declines new work and lets the runs in progress
   * finish for up to this long, then cancels the rest (specs/node-lifecycle.md); 0 cancels at once.
   * @default 60
   */
  stopDrainSeconds: opt(Type.Integer({ minimum: 0, maximum: 86_400 })),
  bidTtlMs: opt(posInt),
  /** Accept policy (specs/job-spec.md, "Provider policy"): lowest total worked for. */
  minPrice: opt(nonNegInt),
  /** Requesters served (empty: any) and never served. */
  allowRequesters: opt(preference('allowRequesters')(Type.Array(peerId))),
  denyRequesters: opt(preference('denyRequesters')(Type.Array(peerId))),
  /** Most jobs locked or running at once. @default unlimited */
  maxConcurrentJobs: opt(posInt),
  heartbeatMs: opt(posInt),
  /**
   * The budget of an allocation's provisioning (fetching and staging its inputs, pulling its
   * image, creating its container), from its invocation; past it the allocation fails and its
   * resources are released. @default 300000
   */
  provisionTimeoutMs: opt(posInt),
  requesterCap: opt(
    typed<NonNullable<ProviderInit['requesterCap']>>()(
      obj({
        maxReservedShare: opt(Type.Number({ exclusiveMinimum: 0, maximum: 1 })),
        maxOpenBids: opt(posInt),
      }),
    ),
  ),
  bidRequestRate: opt(
    // The config offers the rate, not the size of the limiter's peer table.
    typed<Pick<NonNullable<ProviderInit['bidRequestRate']>, 'perSecond' | 'burst'>>()(
      obj({ perSecond: opt(Type.Number({ exclusiveMinimum: 0 })), burst: opt(posInt) }),
    ),
  ),
})

/** JSON schema of `NodeConfig` (specs/config.md): every object refuses unknown fields. */
export const nodeConfigSchema = obj({
  /** Where the key, database and socket live. */
  dataDir: str,
  /** @default ['/ip4/127.0.0.1/tcp/0'] */
  listen: opt(strings),
  /** Peers to dial at start (multiaddrs ending in /p2p/<id>). @default [] */
  bootstrap: opt(strings),
  /** One-host network settings (tests, devnet). @default false */
  oneHost: opt(Type.Boolean()),
  /** Logging (pino, JSON on stderr). */
  log: opt(obj({ level: opt(StringEnum(LOG_LEVELS)) })),
  /** Discovery, connection limits, gossipsub overrides, frame and mailbox limits. @default {} */
  network: opt(networkSchema),
  /**
   * REST API on a unix socket (mode 0600), and optionally on TCP (loopback only, bearer token).
   * false disables it. @default { socket: '<dataDir>/dms.sock' }
   */
  api: opt(Type.Union([Type.Unsafe<false>({ const: false }), apiSchema])),
  /** Prometheus metrics on a listener of their own, with a read-only token. @default none */
  metrics: opt(metricsSchema),
  /** Requester role: post jobs and drive them to settlement. */
  requester: opt(requesterSchema),
  /** Provider role: bid for jobs and run them in Docker. */
  provider: opt(providerSchema),
})

export type NodeConfig = Static<typeof nodeConfigSchema>
export type NetworkConfig = Static<typeof networkSchema>
export type ApiConfig = Static<typeof apiSchema>
export type ProviderConfig = Static<typeof providerSchema>

/**
 * JSON schema of a contract-db config file (`dms contract-db run -c`, specs/contract-db.md): as
 * strict as a node's, so that a misspelt field is refused rather than ignored.
 */
export const contractDbConfigSchema = obj({
  /** Holds `node.key`, `db/` and the operator socket; `--data-dir` wins over it. */
  dataDir: opt(str),
  listen: opt(strings),
  bootstrap: opt(strings),
  oneHost: opt(Type.Boolean()),
  network: opt(networkSchema),
  /** The operator's REST socket; false disables it. @default '<dataDir>/contract-db.sock' */
  socket: opt(Type.Union([Type.Unsafe<false>({ const: false }), str])),
  /** The operator's dashboard on a loopback TCP listener (specs/dashboard.md). @default none */
  web: opt(
    obj({
      /** Loopback only. @default '127.0.0.1' */
      host: opt(StringEnum(['127.0.0.1', '::1'])),
      /** 0 picks a free port. */
      port: Type.Integer({ minimum: 0, maximum: 65535 }),
    }),
  ),
  /** Prometheus metrics on a listener of their own, with a read-only token. @default none */
  metrics: opt(metricsSchema),
  /** Lifetime of the approval credentials it issues. @default 600000 */
  approvalTtlMs: opt(posInt),
  /** The most volunteer contracts one requester may have active. @default 16 */
  maxActiveVolunteerContracts: opt(posInt),
  /** Added to the start (or lock) and the max duration for a contract's settleBy. @default 600000 */
  settleGraceMs: opt(nonNegInt),
  /** After settleBy, how long its provider may claim before the contract expires. @default 3600000 */
  claimWindowMs: opt(nonNegInt),
  /** After a claim, how long its requester may dispute it. @default 86400000 */
  disputeWindowMs: opt(nonNegInt),
  /** How often active contracts past their deadlines are expired. @default 60000 */
  expirySweepMs: opt(posInt),
  /**
   * Where the books live (specs/contract-db.md, "Storage backends"): `level` in `<dataDir>/db`, or
   * a PostgreSQL database several instances may share. @default { backend: 'level' }
   */
  store: opt(
    obj({
      backend: StringEnum(['level', 'postgres']),
      /** `postgres://user@host:port/db` (postgres only; required there). */
      url: opt(Type.String({ minLength: 1, maxLength: 2048, pattern: '^postgres(ql)?://' })),
      /** A file holding the database password (first line), so that the config holds none. */
      passwordFile: opt(Type.String({ minLength: 1, maxLength: 4096 })),
      /** Connections to the database. @default 4 */
      maxConnections: opt(Type.Integer({ minimum: 1, maximum: 64 })),
    }),
  ),
  /** This instance's name, which `/v1/info` reports (several may share one database). @default '<hostname>:<pid>' */
  instance: opt(Type.String({ pattern: '^[A-Za-z0-9._:-]{1,64}$' })),
})

export type ContractDbFileConfig = Static<typeof contractDbConfigSchema>
