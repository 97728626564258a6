/**
 * The price model flags (`--price-per-result`, `--price-fixed`) of `dms onboard` and `dms devnet`,
 * and the config file `dms onboard` writes them into (specs/resources.md, "Onboarding"): one
 * model at a time, never with the per-hour flags, an amount bounded as a peer's terms are, and a
 * config that still loads as `dms run -c` loads it.
 */
import assert from 'node:assert/strict'
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { priceConfig, priceOfFlags, writePricedConfig } from '../../../dms/cli/price-flags.js'
import { loadNodeConfig } from '../../../dms/config.js'
import { fixedPrice, perHour, perResult } from '../../../dms/pricing/terms.js'

const PEER = '12D3KooWAq3nNWkBVHYBAz9wkgcxUV2d6cnDvSFx3XFe2GvF1Pbk'
type Config = { dataDir?: string; provider: { price?: unknown } }
const parsed = (text: string) => JSON.parse(text) as Config

describe('dms onboard / devnet: the price model flags', () => {
  it('choose per-result or fixed terms, or none', () => {
    assert.deepEqual(priceOfFlags({ pricePerResult: '500' }), perResult(500))
    assert.deepEqual(priceOfFlags({ priceFixed: ' 700 ' }), fixedPrice(700))
    assert.deepEqual(priceOfFlags({ priceFixed: '0' }), fixedPrice(0))
    assert.deepEqual(priceOfFlags({ priceFixed: '1000000000000' }), fixedPrice(10 ** 12))
    assert.equal(priceOfFlags({}), undefined)
    assert.equal(priceOfFlags({}, ['--price-cpu']), undefined, 'per hour alone is not a model flag')
  })

  it('refuse two models, a model with the per-hour flags, and amounts out of bounds, saying which', () => {
    const refused = (o: Parameters<typeof priceOfFlags>[0], hourly: string[] = []) => {
      try {
        priceOfFlags(o, hourly)
      } catch (err) {
        assert.equal((err as Error).name, 'CliError')
        return (err as Error).message
      }
      return assert.fail(`accepted ${JSON.stringify(o)}`)
    }
    assert.equal(
      refused({ pricePerResult: '5', priceFixed: '5' }),
      '--price-per-result and --price-fixed are two price models: give one of them',
    )
    assert.equal(
      refused({ priceFixed: '5' }, ['--price-cpu', '--min-price']),
      '--price-fixed prices a whole job and --price-cpu, --min-price its time by the hour: give one or the other',
    )
    for (const bad of ['-1', '1.5', '1e3', '0x10', '', 'ten', '1000000000001', '99999999999999999999'])
      assert.equal(
        refused({ priceFixed: bad }),
        `--price-fixed must be a whole number of micro-tokens from 0 to 1000000000000, got "${bad}"`,
      )
    assert.match(refused({ pricePerResult: '-3' }), /^--price-per-result must be a whole number/)
  })
})

describe('dms onboard: the price written into the config', () => {
  let dir: string
  let path: string
  const env = {}
  const defaultDataDir = '/tmp/dms-default'
  const file = (provider: Record<string, unknown> | undefined, more: Record<string, unknown> = {}) =>
    JSON.stringify({ dataDir: '/tmp/dms-p1', ...more, ...(provider ? { provider } : {}) })
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dms-price-flags-'))
    path = join(dir, 'provider.json')
  })
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('sets provider.price, keeps the rest, and writes a file that loads as dms run loads it', async () => {
    await writeFile(path, file({ contractDb: PEER, maxUnpaidJobs: 3 }, { oneHost: true }))
    await chmod(path, 0o600)
    const priced = await priceConfig(path, { to: fixedPrice(700) }, { env, defaultDataDir })
    assert.equal(priced.dataDir, '/tmp/dms-p1')
    assert.equal(parsed(await readFile(path, 'utf8')).provider.price, undefined, 'not written yet')
    await writePricedConfig(priced)
    const written: unknown = JSON.parse(await readFile(path, 'utf8'))
    assert.deepEqual(written, {
      dataDir: '/tmp/dms-p1',
      oneHost: true,
      provider: { contractDb: PEER, maxUnpaidJobs: 3, price: fixedPrice(700) },
    })
    assert.deepEqual(loadNodeConfig(written).provider?.price, fixedPrice(700))
    assert.equal((await stat(path)).mode & 0o777, 0o600, 'its mode kept (a config may hold a token)')
  })

  it('removes it for per hour, leaves it for keep, and writes nothing when nothing changes', async () => {
    await writeFile(path, file({ contractDb: PEER, price: perResult(5) }))
    const hourly = await priceConfig(path, 'per-hour', { env, defaultDataDir })
    await writePricedConfig(hourly)
    assert.equal(parsed(await readFile(path, 'utf8')).provider.price, undefined)
    assert.equal((await priceConfig(path, 'per-hour', { env, defaultDataDir })).text, undefined)
    await writeFile(path, file({ contractDb: PEER, price: perHour(9, 1) }))
    assert.equal((await priceConfig(path, 'keep', { env, defaultDataDir })).text, undefined)
    assert.equal((await priceConfig(path, { to: perHour(9, 1) }, { env, defaultDataDir })).text, undefined)
  })

  it("takes the data dir as dms run -c does: DMS_DATA_DIR, else the file's, else the default", async () => {
    await writeFile(path, file({ contractDb: PEER }))
    const o = (e: Record<string, string>) => ({ env: e, defaultDataDir })
    assert.equal((await priceConfig(path, 'keep', o({ DMS_DATA_DIR: '/tmp/env' }))).dataDir, '/tmp/env')
    await writeFile(path, JSON.stringify({ provider: { contractDb: PEER } }))
    const priced = await priceConfig(path, { to: perResult(1) }, o({}))
    assert.equal(priced.dataDir, defaultDataDir)
    assert.equal(parsed(priced.text!).dataDir, undefined, 'the default is not written into the file')
  })

  it('refuses a config it cannot read, that is no provider, or that would not load, changing nothing', async () => {
    const refusal = async (text: string | undefined) => {
      if (text !== undefined) await writeFile(path, text)
      try {
        await priceConfig(path, { to: fixedPrice(1) }, { env, defaultDataDir })
      } catch (err) {
        assert.equal((err as Error).name, 'CliError')
        return (err as Error).message
      }
      return assert.fail('accepted')
    }
    assert.match(await refusal(undefined), /^cannot read config .*provider\.json: ENOENT/)
    assert.match(await refusal('{ "dataDir": '), /^cannot read config .*: .*JSON/)
    assert.match(await refusal(file(undefined)), /has no "provider" section: only a provider bids a price$/)
    assert.match(await refusal('[1]'), /has no "provider" section/)
    const invalid = file({ contractDb: PEER, maxUnpaidJobs: -1 })
    assert.match(await refusal(invalid), /maxUnpaidJobs/)
    assert.equal(await readFile(path, 'utf8'), invalid, 'the file is left as it was')
  })
})
