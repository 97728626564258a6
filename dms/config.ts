/**
 * A node's configuration. Spec: specs/config.md. The contract-db is not a role of this node: it
 * runs as its own process (`dms contract-db run`, dms/contract-db/node.ts).
 */
import { Ajv } from 'ajv'
import { DmsError } from '../actors/errors.js'
import type { MailboxInit } from '../actors/mailbox.js'
import { GOSSIP_SCORE_DEFAULTS } from './network/gossip-score.js'
import type { NetworkInit } from './network/host.js'
import type { Prices, Resources } from './resources/types.js'

/** `network`: discovery, connection limits, gossipsub and actor limits. Spec: specs/config.md. */
export interface NetworkConfig extends NetworkInit {
  /** Largest frame (envelope) accepted, on streams and gossip. @default 4194304 */
  maxFrameBytes?: number
  /** Longest a direct frame may take from its first byte to its last. @default 30000 */
  frameReadTimeoutMs?: number
  /** Bytes of unfinished direct frames one connection may hold. @default 2 × maxFrameBytes */
  maxUnfinishedBytesPerConnection?: number
  /** Bytes of unfinished direct frames all connections together may hold. @default 8 × maxFrameBytes */
  maxUnfinishedBytes?: number
  /** Default mailbox of each actor. @default { capacity: 1024, overflow: 'drop-newest' } */
  mailbox?: MailboxInit
}

export interface ApiConfig {
  /** @default '<dataDir>/dms.sock' */
  socket?: string
  /** An extra TCP listener; every request must carry `authorization: Bearer <token>`. */
  tcp?: {
    /** Loopback only. @default '127.0.0.1' */
    host?: '127.0.0.1' | '::1'
    /** 0 picks a free port. */
    port: number
    /** @default a random token generated into '<dataDir>/api-token' (mode 0600) */
    token?: string
  }
}

export interface NodeConfig {
  /** Where the key, database and socket live. */
  dataDir: string
  /** @default ['/ip4/127.0.0.1/tcp/0'] */
  listen?: string[]
  /** Peers to dial at start (multiaddrs ending in /p2p/<id>). @default [] */
  bootstrap?: string[]
  /** One-host network settings (tests, devnet). @default false */
  oneHost?: boolean
  /** Discovery, connection limits, gossipsub overrides, frame and mailbox limits. @default {} */
  network?: NetworkConfig
  /** Logging (pino, JSON on stderr). */
  log?: { level?: (typeof LOG_LEVELS)[number] }
  /**
   * REST API on a unix socket (mode 0600), and optionally on TCP (loopback only, bearer token).
   * false disables it. @default { socket: '<dataDir>/dms.sock' }
   */
  api?: ApiConfig | false
  /** Requester role: post jobs and drive them to settlement. */
  requester?: {
    contractDb: { peer: string; addrs: string[] }
    bidWindowMs?: number
    enoughBids?: number
    /** Grace after the max duration before a silent provider is given up. @default 30000 */
    resultGraceMs?: number
    /** Per-request timeout (lock, contract, invocation, settlement). @default 10000 */
    requestTimeoutMs?: number
    /** Attempts at settling/terminating while the contract-db is unreachable. @default 4 */
    settleAttempts?: number
    /** Bid requests published (with backoff) while some providers stay silent. @default 3 */
    publishAttempts?: number
    /** A running job's provider silent this long is dropped (provider fault). @default 6000 */
    livenessTimeoutMs?: number
    /** Bid requests in a row a provider may leave unanswered before windows stop waiting for it. @default 3 */
    bidSilentAfter?: number
    /** Longest a bid window stays open after its first answer. @default 500 */
    bidStragglerMs?: number
  }
  /** Provider role: bid for jobs and run them in Docker. */
  provider?: {
    contractDb: string
    /**
     * Where to reach the contract-db for this node's approval credential. @default the
     * requester's `contractDb.addrs` when it names the same peer, else the `bootstrap` entries
     * ending in `/p2p/<contractDb>` (else it is dialed by peer id through the peer store)
     */
    contractDbAddrs?: string[]
    /**
     * Initial offer, applied only when nothing is onboarded yet (no offer in the database). Once
     * onboarded, `dms onboard` / `dms offboard` change the stored offer and this is ignored.
     */
    offer?: Resources & { prices: Prices }
    /** Docker engine and executor settings (specs/executor.md). */
    docker?: {
      socketPath?: string
      pullImages?: boolean
      diskQuota?: boolean
      /**
       * Registries whose images are looked up or pulled; a job naming another is declined before
       * the engine is asked. @default ["docker.io"] (images named without a registry)
       */
      registries?: string[]
    }
    allowedImages?: string[]
    /** Largest total of a job's output files (archived and fetched by the requester). @default 268435456 (256 MiB) */
    maxOutputBytes?: number
    /**
     * Disk quota on /outputs of a job that gives no `disk`, capped at the offer's free disk; held in
     * the ledger like a job's own disk (specs/resources.md). At least 8 MiB. @default 268435456 (256 MiB)
     */
    defaultDiskBytes?: number
    maxDurationSeconds?: number
    bidTtlMs?: number
    /** Accept policy (specs/job-spec.md, "Provider policy"): lowest total worked for. */
    minPrice?: number
    /** Requesters served (empty: any) and never served. */
    allowRequesters?: string[]
    denyRequesters?: string[]
    /** Most jobs locked or running at once. @default unlimited */
    maxConcurrentJobs?: number
    /** How often a running allocation tells its requester it is alive. @default 2000 */
    heartbeatMs?: number
    /**
     * What one requester may hold in open reservations (bids not yet locked). @default
     * { maxReservedShare: 0.5, maxOpenBids: 100 }
     */
    requesterCap?: { maxReservedShare?: number; maxOpenBids?: number }
    /** Bid requests answered per peer (token bucket). @default { perSecond: 100, burst: 200 } */
    bidRequestRate?: { perSecond?: number; burst?: number }
  }
}

/** Log levels accepted by `log.level` and `DMS_LOG_LEVEL`. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const

/** A config file or `DMS_*` variable that does not fit the schema: names the field and the source. */
export class ConfigError extends DmsError {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super('INVALID_CONFIG', message)
  }
}

const nonNegInt = { type: 'integer', minimum: 0 } as const
const posInt = { type: 'integer', minimum: 1 } as const
const nonNeg = { type: 'number', minimum: 0 } as const
const str = { type: 'string', minLength: 1 } as const
const strings = { type: 'array', items: str } as const
const peerId = { type: 'string', pattern: '^[1-9A-HJ-NP-Za-km-z]{46,60}$' } as const
const obj = (properties: Record<string, unknown>, required: string[] = []) => ({
  type: 'object',
  additionalProperties: false,
  properties,
  required,
})

/** JSON schema of `NodeConfig` (specs/config.md): every object refuses unknown fields. */
export const nodeConfigSchema = obj(
  {
    dataDir: str,
    listen: strings,
    bootstrap: strings,
    oneHost: { type: 'boolean' },
    log: obj({ level: { type: 'string', enum: [...LOG_LEVELS] } }),
    network: obj({
      connections: obj({
        maxConnections: posInt,
        inboundConnectionThreshold: nonNeg,
        maxIncomingPendingConnections: posInt,
        maxParallelDials: posInt,
      }),
      gossipsub: obj({
        D: nonNegInt,
        Dlo: nonNegInt,
        Dhi: nonNegInt,
        Dlazy: nonNegInt,
        heartbeatIntervalMs: posInt,
        floodPublish: { type: 'boolean' },
        ipColocationFactorWeight: { type: 'number', maximum: 0 },
        score: obj({
          topicWeight: nonNeg,
          invalidMessageWeight: { type: 'number', maximum: 0 },
          invalidMessageDecay: { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1 },
          gossipThreshold: { type: 'number', maximum: 0 },
          publishThreshold: { type: 'number', maximum: 0 },
          graylistThreshold: { type: 'number', maximum: 0 },
        }),
      }),
      mdns: {
        anyOf: [{ type: 'boolean' }, obj({ intervalMs: posInt, serviceTag: str })],
      },
      maxFrameBytes: { type: 'integer', minimum: 1024 },
      frameReadTimeoutMs: posInt,
      maxUnfinishedBytesPerConnection: { type: 'integer', minimum: 1024 },
      maxUnfinishedBytes: { type: 'integer', minimum: 1024 },
      mailbox: obj({ capacity: posInt, overflow: { type: 'string', enum: ['drop-newest', 'drop-oldest'] } }),
    }),
    api: {
      anyOf: [
        { const: false },
        obj({
          socket: str,
          tcp: obj(
            {
              host: { type: 'string', enum: ['127.0.0.1', '::1'] },
              port: { type: 'integer', minimum: 0, maximum: 65535 },
              token: { type: 'string', minLength: 16 },
            },
            ['port'],
          ),
        }),
      ],
    },
    requester: obj(
      {
        contractDb: obj({ peer: peerId, addrs: strings }, ['peer', 'addrs']),
        bidWindowMs: nonNegInt,
        enoughBids: posInt,
        resultGraceMs: nonNegInt,
        requestTimeoutMs: posInt,
        settleAttempts: posInt,
        publishAttempts: posInt,
        livenessTimeoutMs: posInt,
        bidSilentAfter: posInt,
        bidStragglerMs: nonNegInt,
      },
      ['contractDb'],
    ),
    provider: obj(
      {
        contractDb: peerId,
        contractDbAddrs: strings,
        offer: obj(
          {
            cpu: nonNeg,
            memoryBytes: nonNegInt,
            diskBytes: nonNegInt,
            gpus: nonNegInt,
            prices: obj(
              {
                perCpuHour: nonNegInt,
                perGiBMemoryHour: nonNegInt,
                perGiBDiskHour: nonNegInt,
                perGpuHour: nonNegInt,
                minJobPrice: nonNegInt,
              },
              ['perCpuHour', 'perGiBMemoryHour', 'perGiBDiskHour', 'perGpuHour', 'minJobPrice'],
            ),
          },
          ['cpu', 'memoryBytes', 'diskBytes', 'gpus', 'prices'],
        ),
        docker: obj({
          socketPath: str,
          pullImages: { type: 'boolean' },
          diskQuota: { type: 'boolean' },
          registries: { type: 'array', maxItems: 256, items: { ...str, maxLength: 255 } },
        }),
        allowedImages: strings,
        maxDurationSeconds: posInt,
        bidTtlMs: posInt,
        maxOutputBytes: posInt,
        defaultDiskBytes: { type: 'integer', minimum: 8 * 1024 * 1024 },
        minPrice: nonNegInt,
        allowRequesters: { type: 'array', items: peerId },
        denyRequesters: { type: 'array', items: peerId },
        maxConcurrentJobs: posInt,
        heartbeatMs: posInt,
        requesterCap: obj({
          maxReservedShare: { type: 'number', exclusiveMinimum: 0, maximum: 1 },
          maxOpenBids: posInt,
        }),
        bidRequestRate: obj({ perSecond: { type: 'number', exclusiveMinimum: 0 }, burst: posInt }),
      },
      ['contractDb'],
    ),
  },
  ['dataDir'],
)

const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true })
const validate = ajv.compile(nodeConfigSchema)

/** The most telling of ajv's errors: the deepest path, and not an anyOf/const summary of a union. */
function mostSpecific<T extends { instancePath: string; keyword: string }>(errors: T[]): T | undefined {
  const depth = (e: T) => e.instancePath.split('/').length
  const weak = (e: T) => (e.keyword === 'anyOf' || e.keyword === 'const' ? 2 : e.keyword === 'type' ? 1 : 0)
  return [...errors].sort((a, b) => depth(b) - depth(a) || weak(a) - weak(b))[0]
}

/** `DMS_*` variables that override a config field (specs/config.md, "Environment"). */
export const ENV_OVERRIDES: Array<{ env: string; field: string; kind: 'string' | 'list' | 'bool' | 'int' }> =
  [
    { env: 'DMS_DATA_DIR', field: 'dataDir', kind: 'string' },
    { env: 'DMS_LISTEN', field: 'listen', kind: 'list' },
    { env: 'DMS_BOOTSTRAP', field: 'bootstrap', kind: 'list' },
    { env: 'DMS_ONE_HOST', field: 'oneHost', kind: 'bool' },
    { env: 'DMS_LOG_LEVEL', field: 'log.level', kind: 'string' },
    { env: 'DMS_API_SOCKET', field: 'api.socket', kind: 'string' },
    { env: 'DMS_API_PORT', field: 'api.tcp.port', kind: 'int' },
    { env: 'DMS_API_TOKEN', field: 'api.tcp.token', kind: 'string' },
  ]

function envValue(o: (typeof ENV_OVERRIDES)[number], raw: string): unknown {
  switch (o.kind) {
    case 'string':
      return raw
    case 'list':
      return raw
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s.length > 0)
    case 'bool':
      if (['1', 'true', 'yes'].includes(raw.toLowerCase())) return true
      if (['0', 'false', 'no'].includes(raw.toLowerCase())) return false
      throw new ConfigError(o.field, `${o.env}=${raw}: must be true or false`)
    case 'int': {
      if (!/^\d+$/.test(raw)) throw new ConfigError(o.field, `${o.env}=${raw}: must be a whole number`)
      return Number(raw)
    }
  }
}

/**
 * Builds a node config from a parsed config file (or `{}`), `DMS_*` overrides from `env`, then
 * checks it against `nodeConfigSchema`. Precedence: env over file. Throws ConfigError naming the
 * field (and the variable, when it came from one). Does not resolve paths.
 */
export function loadNodeConfig(
  file: unknown,
  env: Record<string, string | undefined> = {},
  source = 'config',
): NodeConfig {
  if (typeof file !== 'object' || file === null || Array.isArray(file))
    throw new ConfigError('', `${source}: must be a JSON object`)
  const cfg = structuredClone(file) as Record<string, unknown>
  const fromEnv = new Map<string, string>()
  for (const o of ENV_OVERRIDES) {
    const raw = env[o.env]
    if (raw === undefined || raw === '') continue
    const value = envValue(o, raw)
    const path = o.field.split('.')
    let at = cfg
    for (const k of path.slice(0, -1)) {
      const next = at[k]
      if (next === false && k === 'api')
        throw new ConfigError(o.field, `${o.env} is set but the config disables the API ("api": false)`)
      if (typeof next !== 'object' || next === null) at[k] = {}
      at = at[k] as Record<string, unknown>
    }
    at[path[path.length - 1]] = value
    fromEnv.set(`/${path.join('/')}`, o.env)
  }
  if (!validate(cfg)) {
    const e = mostSpecific(validate.errors ?? [])
    let path = e?.instancePath ?? ''
    let detail = e?.message ?? 'invalid'
    if (e?.keyword === 'additionalProperties') {
      const extra = String((e.params as { additionalProperty?: string }).additionalProperty)
      path = `${path}/${extra}`
      detail = 'unknown field'
    } else if (e?.keyword === 'required') {
      path = `${path}/${String((e.params as { missingProperty?: string }).missingProperty)}`
      detail = 'is required'
    } else if (e?.keyword === 'enum') {
      detail = `must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`
    }
    const field = path.replace(/^\//, '').replaceAll('/', '.')
    const env = fromEnv.get(path)
    throw new ConfigError(
      field,
      `${source}: ${field === '' ? '(root)' : `"${field}"`}${env ? ` (from ${env})` : ''}: ${detail}`,
    )
  }
  const config = cfg as unknown as NodeConfig
  checkScoreThresholds(config, source)
  return config
}

/** Gossipsub needs graylist ≤ publish ≤ gossip threshold (each ≤ 0, checked by the schema). */
function checkScoreThresholds(cfg: NodeConfig, source: string): void {
  const s = { ...GOSSIP_SCORE_DEFAULTS, ...cfg.network?.gossipsub?.score }
  const field = 'network.gossipsub.score'
  if (s.publishThreshold > s.gossipThreshold)
    throw new ConfigError(
      `${field}.publishThreshold`,
      `${source}: "${field}.publishThreshold" (${s.publishThreshold}): must be <= gossipThreshold (${s.gossipThreshold})`,
    )
  if (s.graylistThreshold > s.publishThreshold)
    throw new ConfigError(
      `${field}.graylistThreshold`,
      `${source}: "${field}.graylistThreshold" (${s.graylistThreshold}): must be <= publishThreshold (${s.publishThreshold})`,
    )
}
