/**
 * A node's configuration: loading, `DMS_*` overrides and the check against its schema
 * (dms/config-schema.ts). Spec: specs/config.md. The contract-db is not a role of this node: it
 * runs as its own process (`dms contract-db run`, dms/contract-db/node.ts).
 */
import type { ValidateFunction } from 'ajv'
import { compileOnUse } from './schema.js'
import { DmsError } from '../actors/errors.js'
import {
  contractDbConfigSchema,
  nodeConfigSchema,
  type ContractDbFileConfig,
  type NodeConfig,
} from './config-schema.js'
import { GOSSIP_SCORE_DEFAULTS } from './network/gossip-score.js'

export {
  LOG_LEVELS,
  nodeConfigSchema,
  type ApiConfig,
  type ContractDbFileConfig,
  type NetworkConfig,
  type NodeConfig,
  type ProviderConfig,
} from './config-schema.js'

/** A config file or `DMS_*` variable that does not fit the schema: names the field and the source. */
export class ConfigError extends DmsError {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super('INVALID_CONFIG', message)
  }
}

// A config is read once at start: a running node lets the compiled checks go (dms/schema.ts).
const CHECK_OPTIONS = { allErrors: true, strict: true, allowUnionTypes: true }
const validate = compileOnUse(nodeConfigSchema, CHECK_OPTIONS, 'weak')

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
  checkSchema(validate(), cfg, source, fromEnv)
  const config = cfg as NodeConfig
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

/** Throws ConfigError naming the most specific field `check` refuses in `cfg` (and its variable). */
function checkSchema(
  check: ValidateFunction,
  cfg: unknown,
  source: string,
  fromEnv: Map<string, string> = new Map(),
): void {
  if (check(cfg)) return
  const validate = check
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

const validateContractDb = compileOnUse(contractDbConfigSchema, CHECK_OPTIONS, 'weak')

/**
 * Checks a contract-db config file (`dms contract-db run -c`) against its schema: an unknown field
 * (a typo) or a bad value is refused, naming the field, instead of silently falling back to a
 * default (a new identity in another data dir).
 */
export function loadContractDbConfig(file: unknown, source = 'config'): ContractDbFileConfig {
  if (typeof file !== 'object' || file === null || Array.isArray(file))
    throw new ConfigError('', `${source}: must be a JSON object`)
  checkSchema(validateContractDb(), file, source)
  const store = (file as ContractDbFileConfig).store
  if (store?.backend === 'postgres' && store.url === undefined)
    throw new ConfigError('store.url', `${source}: "store.url": the postgres backend needs a postgres:// URL`)
  if (store?.backend === 'level' && (store.url ?? store.passwordFile ?? store.maxConnections) !== undefined)
    throw new ConfigError(
      'store',
      `${source}: "store": url, passwordFile and maxConnections are for the postgres backend`,
    )
  return file
}
