/**
 * `dms onboard`, `dms offboard`, `dms resources`: the provider's offer and where its resources are.
 * They talk to the running daemon over its REST socket; when no daemon answers they open the data
 * dir's database directly (the database lock refuses while another dms holds it).
 * Spec: specs/resources.md.
 */
import { mkdir } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { systemClock } from '../../actors/clock.js'
import { ApiClient, ApiClientError, DaemonNotRunningError } from '../api/client.js'
import { silentLogger } from '../log.js'
import { formatAmount, ResourceError, UnitError } from '../resources/errors.js'
import { DIMENSIONS } from '../resources/math.js'
import { formatResources } from '../resources/units.js'
import type { Onboarding, OnboardRequest, ResourcesView } from '../resources/onboarding.js'
import type { Prices } from '../resources/types.js'
import { DataDirInUseError, openDb } from '../store/db.js'
import { existingNodeDb } from './node-data.js'
import { CliError, isWide, print, printData } from './output.js'
import {
  modelFlagOf,
  priceConfig,
  priceOfFlags,
  writePricedConfig,
  type PriceModelFlags,
  type PricedConfig,
} from './price-flags.js'
import { describePrice } from '../pricing/price.js'
import { tableLines } from './table.js'

export interface Target {
  dataDir: string
  /** @default '<dataDir>/dms.sock' */
  socket?: string
  json?: boolean
}

export interface OnboardOptions extends Target, PriceModelFlags {
  /** The node's config file, whose `provider.price` the price model flags set (price-flags.ts). */
  config?: string
  /** Whether `--data-dir` was given: without it, a `--config`'s data dir is the target. */
  dataDirGiven?: boolean
  cpu?: string
  memory?: string
  disk?: string
  gpu?: string
  priceCpu?: string
  priceMemory?: string
  priceDisk?: string
  priceGpu?: string
  minPrice?: string
}

/**
 * Runs `viaApi` against the daemon, or `direct` on the data dir when no daemon answers.
 * User mistakes (bad units, limits, a data dir in use) become one-line CliErrors.
 */
async function withNode<T>(
  t: Target,
  viaApi: (api: ApiClient) => Promise<T>,
  direct: (o: Onboarding) => Promise<T>,
  /** Whether the offline path may create the data directory (onboarding does; a read never). */
  create = false,
): Promise<T> {
  const dataDir = resolve(t.dataDir)
  const socket = t.socket ?? join(dataDir, 'dms.sock')
  try {
    try {
      return await viaApi(new ApiClient(socket))
    } catch (err) {
      if (!(err instanceof DaemonNotRunningError)) throw err
    }
    if (create)
      await mkdir(dataDir, { recursive: true, mode: 0o700 }) // as the node creates it
    else existingNodeDb(dataDir)
    // Loaded only here: `dms --help` and the API path need none of them (start-up time).
    const [{ ResourceLedger }, { DockerExecutor }, { MachineMeter }, { Onboarding }] = await Promise.all([
      import('../resources/ledger.js'),
      import('../executor/docker/docker-executor.js'),
      import('../resources/measure.js'),
      import('../resources/onboarding.js'),
    ])
    const db = await openDb(join(dataDir, 'db'))
    const ledger = new ResourceLedger({ db, clock: systemClock, log: silentLogger })
    try {
      await ledger.start()
      const executor = new DockerExecutor({ log: silentLogger }, { workDir: join(dataDir, 'work') })
      const meter = new MachineMeter({ engines: [executor], clock: systemClock }, { dataDir })
      return await direct(new Onboarding({ ledger, meter, clock: systemClock }))
    } finally {
      await ledger.stop()
      await db.close()
    }
  } catch (err) {
    if (
      err instanceof ApiClientError ||
      err instanceof ResourceError ||
      err instanceof UnitError ||
      err instanceof DataDirInUseError
    )
      throw new CliError(err.message)
    throw err
  }
}

function wholePrice(flag: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined
  if (!/^\d+$/.test(v.trim()))
    throw new CliError(`${flag} must be a whole number of micro-tokens, 0 or more (e.g. 1000), got "${v}"`)
  return Number(v)
}

function gpuList(v: string | undefined): number[] | undefined {
  if (v === undefined) return undefined
  if (v.trim() === '' || v.trim() === 'none') return []
  return v.split(',').map((s) => {
    if (!/^\d+$/.test(s.trim()))
      throw new CliError(`--gpu takes GPU indices separated by commas (e.g. 0,1) or "none", got "${v}"`)
    return Number(s)
  })
}

/** The REST body / service request for these flags (only what was given). */
export function onboardRequest(o: OnboardOptions): OnboardRequest {
  const prices: Partial<Prices> = {}
  const set = (k: keyof Prices, flag: string, v: string | undefined) => {
    const n = wholePrice(flag, v)
    if (n !== undefined) prices[k] = n
  }
  set('perCpuHour', '--price-cpu', o.priceCpu)
  set('perGiBMemoryHour', '--price-memory', o.priceMemory)
  set('perGiBDiskHour', '--price-disk', o.priceDisk)
  set('perGpuHour', '--price-gpu', o.priceGpu)
  set('minJobPrice', '--min-price', o.minPrice)
  const req: OnboardRequest = {}
  if (o.cpu !== undefined) req.cpu = o.cpu
  if (o.memory !== undefined) req.memory = o.memory
  if (o.disk !== undefined) req.disk = o.disk
  const gpus = gpuList(o.gpu)
  if (gpus !== undefined) req.gpus = gpus
  if (Object.keys(prices).length > 0) req.prices = prices
  return req
}

const iso = (ms: number) => new Date(ms).toISOString()
const DIMENSION_HEADERS: Record<(typeof DIMENSIONS)[number], string> = {
  cpu: 'CPU',
  memoryBytes: 'MEMORY',
  diskBytes: 'DISK',
  gpus: 'GPUS',
}

/** One engine as `dms resources` shows it: what it runs, or why it cannot. */
function engineLine(e: ResourcesView['machine']['engines'][number]): string {
  if (!e.available) return `${e.name}: unavailable (${e.why ?? 'unknown'})`
  const can = [
    e.artifactKinds.join(', '),
    ...(e.runtimes !== undefined && e.runtimes.length > 0 ? [`runtimes ${e.runtimes.join(' ')}`] : []),
    `network ${e.networkPolicies.join('/')}`,
    ...(e.gpus ? ['gpus'] : []),
    ...(e.diskQuota ? ['disk quota'] : []),
    ...(e.fetchesArtifacts ? ['pulls'] : []),
  ]
  return `${e.name}: available, version ${e.version ?? '?'} (${can.join('; ')})`
}

/** `dms resources` as text: the machine, the offer and its prices, and a table of amounts by state. */
export function renderResources(v: ResourcesView): string {
  const m = v.machine
  const lines: string[] = []
  lines.push(
    `machine   ${m.cpu.model}, ${m.cpu.cores} cores ${m.cpu.arch} @ ${m.cpu.speedGHz} GHz; ` +
      `${m.os.distro} ${m.os.release} (${m.os.platform} ${m.os.kernel})`,
  )
  lines.push(
    `gpus      ${m.gpus.length === 0 ? 'none' : m.gpus.map((g) => `#${g.index} ${g.model.startsWith(g.vendor) ? '' : `${g.vendor} `}${g.model} ${formatAmount('memoryBytes', g.memoryBytes)}`).join('; ')}`,
  )
  if (m.engines.length === 0) lines.push('engines   none offered')
  for (const e of m.engines) lines.push(`engine    ${engineLine(e)}`)
  lines.push(
    `data disk ${m.disk.path}: ${formatAmount('diskBytes', m.disk.freeBytes)} free of ${formatAmount('diskBytes', m.disk.totalBytes)}`,
  )
  const o = v.offer
  if (o === null) lines.push("status    not onboarded: run 'dms onboard' to offer resources")
  else {
    lines.push(
      v.status === 'offboarded'
        ? `status    offboarded at ${iso(o.withdrawnAt ?? 0)}: no new bids; running work finishes`
        : `status    onboarded since ${iso(o.onboardedAt)}${o.updatedAt !== undefined && o.updatedAt !== o.onboardedAt ? `, changed ${iso(o.updatedAt)}` : ''}`,
    )
    const p = o.prices
    lines.push(
      `prices    ${p.perCpuHour}/core-hour, ${p.perGiBMemoryHour}/GiB-hour memory, ${p.perGiBDiskHour}/GiB-hour disk, ` +
        `${p.perGpuHour}/GPU-hour, min ${p.minJobPrice} per job (micro-tokens)`,
    )
    if ((o.gpuIndices ?? []).length > 0) lines.push(`gpus      offered: ${(o.gpuIndices ?? []).join(', ')}`)
  }
  const rows: Array<[string, ResourcesView['free']]> = [
    ['machine', v.machineResources],
    ['host reserve', v.hostReserve],
    ['max offer', v.maxOffer],
    ['onboarded', v.onboarded],
    ['reserved', v.reserved],
    ['locked', v.locked],
    ['allocated', v.allocated],
    ['free', v.free],
  ]
  const table = [
    ['', 'cpu', 'memory', 'disk', 'gpus'],
    ...rows.map(([name, r]) => [name, ...DIMENSIONS.map((d) => formatAmount(d, r[d]))]),
  ]
  const widths = table[0].map((_, i) => Math.max(...table.map((row) => row[i].length)))
  lines.push('')
  for (const row of table)
    lines.push(
      row
        .map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i])))
        .join('  ')
        .trimEnd(),
    )
  lines.push('(machine disk = free space on the data disk)')
  if (v.entries.length > 0) {
    lines.push('')
    // ALLOCATION is the id `dms job status` shows (set once allocated); BID the ledger's own key.
    lines.push(
      ...tableLines(
        [
          'STATE',
          'ALLOCATION',
          'JOB',
          ...DIMENSIONS.map((d) => DIMENSION_HEADERS[d]),
          'UNTIL',
          ...(isWide() ? ['BID'] : []),
        ],
        v.entries.map((e) => [
          e.state,
          e.allocationId,
          e.jobId,
          ...DIMENSIONS.map((d) => formatAmount(d, e.resources[d])),
          e.expiresAt !== undefined ? iso(e.expiresAt) : undefined,
          ...(isWide() ? [e.id] : []),
        ]),
      ),
    )
  }
  return lines.join('\n')
}

/** The per-hour price flags, by option key. */
const HOURLY_FLAGS = [
  ['priceCpu', '--price-cpu'],
  ['priceMemory', '--price-memory'],
  ['priceDisk', '--price-disk'],
  ['priceGpu', '--price-gpu'],
  ['minPrice', '--min-price'],
] as const

/**
 * `dms onboard`: the offer (and its hourly rates) through the daemon or the data dir; with
 * `--config`, the price model too: `--price-per-result`/`--price-fixed` set the config's
 * `provider.price`, the per-hour flags remove it. Everything is checked before anything changes;
 * the config is written once the offer is.
 */
export async function onboardCommand(o: OnboardOptions): Promise<void> {
  const hourly = HOURLY_FLAGS.filter(([k]) => o[k] !== undefined).map(([, flag]) => flag)
  const price = priceOfFlags(o, hourly)
  const model = modelFlagOf(o)
  if (model !== undefined && o.config === undefined)
    throw new CliError(
      `${model} is written into the node's config (provider.price): give its file with -c/--config <file>`,
    )
  const req = onboardRequest(o)
  const priced: PricedConfig | undefined =
    o.config === undefined
      ? undefined
      : await priceConfig(
          o.config,
          price !== undefined ? { to: price } : hourly.length > 0 ? 'per-hour' : 'keep',
          { env: process.env, defaultDataDir: o.dataDir },
        )
  const target = {
    ...o,
    dataDir: priced !== undefined && o.dataDirGiven !== true ? priced.dataDir : o.dataDir,
  }
  const view = await withNode(
    target,
    (api) => api.ok<ResourcesView>('PUT', '/v1/resources/offer', req),
    (ob) => ob.onboard(req),
    true,
  )
  const written = priced?.text !== undefined ? priced : undefined
  if (written !== undefined) await writePricedConfig(written)
  if (o.json) {
    printData(
      written === undefined ? view : { ...view, config: { path: written.path, price: price ?? null } },
    )
    return
  }
  print(`onboarded: ${formatResources(view.onboarded)}`)
  if (written !== undefined)
    print(
      price === undefined
        ? `price: per hour at the onboarded rates (provider.price removed from ${written.path}); a running node bids so from its next start`
        : `price: ${describePrice(price)}, written to ${written.path} (provider.price); a running node bids it from its next start`,
    )
  print(renderResources(view))
}

export async function offboardCommand(o: Target): Promise<void> {
  const view = await withNode(
    o,
    (api) => api.ok<ResourcesView>('DELETE', '/v1/resources/offer'),
    (ob) => ob.offboard(),
  )
  if (o.json) {
    printData(view)
    return
  }
  const busy = DIMENSIONS.some((d) => view.reserved[d] + view.locked[d] + view.allocated[d] > 0)
  print(`offboarded: no new bids${busy ? '; reserved, locked and running work finishes' : ''}`)
  print(renderResources(view))
}

export async function resourcesCommand(o: Target & { refresh?: boolean }): Promise<void> {
  const view = await withNode(
    o,
    (api) => api.ok<ResourcesView>('GET', `/v1/resources${o.refresh ? '?refresh=true' : ''}`),
    (ob) => ob.view({ refresh: o.refresh }),
  )
  if (o.json) {
    printData(view)
    return
  }
  print(renderResources(view))
}
