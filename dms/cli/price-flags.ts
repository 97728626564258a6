/**
 * The price model flags: `--price-per-result N` and `--price-fixed N` (`dms onboard`, `dms devnet`),
 * and the config file `dms onboard` writes them into (`provider.price`). The config is read when a
 * node starts, so a running node bids the new price from its next start.
 * Spec: specs/resources.md ("Onboarding"), specs/pricing.md.
 */
import { readFile, rename, stat, writeFile } from 'node:fs/promises'
import { ConfigError, loadNodeConfig } from '../config.js'
import { fixedPrice, isPrice, MAX_PRICE, perResult, type PriceTerms } from '../pricing/terms.js'
import { CliError } from './output.js'

/** The price model flags as commander gives them. */
export interface PriceModelFlags {
  pricePerResult?: string
  priceFixed?: string
}

const MODELS = [
  { key: 'pricePerResult', flag: '--price-per-result', terms: perResult },
  { key: 'priceFixed', flag: '--price-fixed', terms: fixedPrice },
] as const

/** The flag of the price model `o` names, if any (`--price-per-result` or `--price-fixed`). */
export const modelFlagOf = (o: PriceModelFlags): string | undefined =>
  MODELS.find((m) => o[m.key] !== undefined)?.flag

/**
 * The price terms the flags choose, undefined when they choose none. Refused (CliError): both
 * models at once, a model with any of the per-hour flags in `hourly` (given by the caller), an
 * amount that is not a whole number of micro-tokens from 0 to MAX_PRICE (as a peer's terms are
 * bounded, `priceProblem`).
 */
export function priceOfFlags(o: PriceModelFlags, hourly: string[] = []): PriceTerms | undefined {
  const given = MODELS.filter((m) => o[m.key] !== undefined)
  if (given.length === 0) return undefined
  if (given.length > 1)
    throw new CliError('--price-per-result and --price-fixed are two price models: give one of them')
  const { key, flag, terms } = given[0]
  if (hourly.length > 0)
    throw new CliError(
      `${flag} prices a whole job and ${hourly.join(', ')} its time by the hour: give one or the other`,
    )
  const raw = o[key] ?? ''
  const n = Number(raw.trim())
  if (!/^\d+$/.test(raw.trim()) || !isPrice(n))
    throw new CliError(`${flag} must be a whole number of micro-tokens from 0 to ${MAX_PRICE}, got "${raw}"`)
  return terms(n)
}

/** A config file with its price changed, checked as `dms run` will load it, not yet written. */
export interface PricedConfig {
  path: string
  /** The file's new text; undefined when nothing changes. */
  text?: string
  /** Its data dir as `dms run -c` takes it: `DMS_DATA_DIR`, else the file's, else the default. */
  dataDir: string
}

/**
 * What `dms onboard` does to the config's price: sets it to terms, removes it (`per-hour`: the
 * node then bids per hour at its onboarded rates), or leaves it (`keep`).
 */
export type PriceChange = { to: PriceTerms } | 'per-hour' | 'keep'

/**
 * Reads the node's config at `path` and changes its `provider.price` as `change` says. Checked against the
 * config schema with `o.env` applied, as `dms run -c` checks it, so a file it writes starts.
 * Throws CliError: unreadable, not JSON, no `provider` section (not a provider), or invalid.
 */
export async function priceConfig(
  path: string,
  change: PriceChange,
  o: { env: Record<string, string | undefined>; defaultDataDir: string },
): Promise<PricedConfig> {
  let file: unknown
  try {
    file = JSON.parse(await readFile(path, 'utf8'))
  } catch (err) {
    throw new CliError(`cannot read config ${path}: ${(err as Error).message}`)
  }
  const obj = (v: unknown): v is Record<string, unknown> =>
    typeof v === 'object' && v !== null && !Array.isArray(v)
  if (!obj(file) || !obj(file.provider))
    throw new CliError(`config ${path} has no "provider" section: only a provider bids a price`)
  const { price: old, ...provider } = file.provider
  const price = change === 'keep' ? old : change === 'per-hour' ? undefined : change.to
  const next = { ...file, provider: price === undefined ? provider : { ...provider, price } }
  let dataDir: string
  try {
    const withDir = 'dataDir' in next ? next : { ...next, dataDir: o.defaultDataDir }
    dataDir = loadNodeConfig(withDir, o.env, `config ${path}`).dataDir
  } catch (err) {
    if (err instanceof ConfigError) throw new CliError(err.message)
    throw err
  }
  const same = JSON.stringify(old) === JSON.stringify(price)
  return { path, dataDir, ...(same ? {} : { text: `${JSON.stringify(next, null, 2)}\n` }) }
}

/** Writes a priced config in place, atomically (a temp file renamed over it), keeping its mode. */
export async function writePricedConfig(c: PricedConfig): Promise<void> {
  if (c.text === undefined) return
  const tmp = `${c.path}.${process.pid}.tmp`
  try {
    await writeFile(tmp, c.text, { mode: (await stat(c.path)).mode & 0o777 })
    await rename(tmp, c.path)
  } catch (err) {
    throw new CliError(`cannot write config ${c.path}: ${(err as Error).message}`)
  }
}
