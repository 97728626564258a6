/**
 * Onboarding: turning what a person asks for (`--cpu 2 --memory 4GiB`) into an offer the machine can
 * honour, storing it in the ledger, withdrawing it, and showing where every resource is.
 * Used by the REST API (daemon running) and by the CLI directly on the data dir (daemon stopped).
 * Spec: specs/resources.md.
 */
import type { Clock } from '../../actors/clock.js'
import { InvalidPriceError, OfferExceedsMachineError, UnknownGpuError, type MachineLimit } from './errors.js'
import {
  DEFAULT_DISK_BYTES,
  DEFAULT_PRICES,
  hostReserve,
  machineResources,
  maxOffer,
} from './host-reserve.js'
import type { LedgerEntry, ResourceLedger } from './ledger.js'
import { DIMENSIONS, normalize, roundCpu } from './math.js'
import type { MachineInfo, Offer, Prices, Resources } from './types.js'
import { ZERO } from './types.js'
import { parseBytes, parseCpu } from './units.js'
import type { OnboardRequest } from './onboard-request.js'

export type { OnboardRequest } from './onboard-request.js'

export type OnboardingStatus = 'not-onboarded' | 'onboarded' | 'offboarded'

/** Everything `dms resources` shows. */
export interface ResourcesView {
  status: OnboardingStatus
  machine: MachineInfo
  /** The machine as amounts (disk = free space on the data dir's filesystem). */
  machineResources: Resources
  hostReserve: Resources
  /** machineResources - hostReserve: the largest offer `dms onboard` accepts. */
  maxOffer: Resources
  offer: Offer | null
  /** The offered resources (zero when not onboarded). */
  onboarded: Resources
  /** offered - reserved - locked - allocated (zero while offboarded). */
  free: Resources
  /** Held for pending bids, until they expire. */
  reserved: Resources
  /** Held for a contract being closed. */
  locked: Resources
  /** In use by running allocations. */
  allocated: Resources
  entries: LedgerEntry[]
}

export interface OnboardingComponents {
  ledger: ResourceLedger
  meter: { get(): Promise<MachineInfo>; refresh(): Promise<MachineInfo> }
  clock: Pick<Clock, 'now'>
}

export interface OnboardingInit {
  /** Replaces single dimensions of the default host reserve (see `hostReserve`). @default {} */
  hostReserve?: Partial<Resources>
}

const PRICE_FIELDS: ReadonlyArray<keyof Prices> = [
  'perCpuHour',
  'perGiBMemoryHour',
  'perGiBDiskHour',
  'perGpuHour',
  'minJobPrice',
]

function checkPrices(p: Partial<Prices> | undefined): Partial<Prices> {
  if (p === undefined) return {}
  if (typeof p !== 'object' || p === null) throw new InvalidPriceError('prices', p)
  for (const [k, v] of Object.entries(p)) {
    if (!PRICE_FIELDS.includes(k as keyof Prices)) throw new InvalidPriceError(k, v)
    if (v === undefined) continue
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw new InvalidPriceError(k, v)
  }
  return p
}

function checkGpus(indices: unknown, machine: MachineInfo): number[] {
  const available = machine.gpus.map((g) => g.index)
  if (!Array.isArray(indices)) throw new UnknownGpuError(NaN, available, 'GPUs are a list of indices')
  const seen = new Set<number>()
  for (const i of indices) {
    if (typeof i !== 'number' || !Number.isSafeInteger(i) || i < 0)
      throw new UnknownGpuError(Number(i), available, 'a GPU index is a whole number, 0 or more')
    if (!available.includes(i)) throw new UnknownGpuError(i, available)
    if (seen.has(i)) throw new UnknownGpuError(i, available, 'listed twice')
    seen.add(i)
  }
  return [...seen].sort((a, b) => a - b)
}

/** The onboarded offer of one node, over its ledger and machine measurement. */
export class Onboarding {
  constructor(
    private readonly c: OnboardingComponents,
    private readonly init: OnboardingInit = {},
  ) {}

  /**
   * Creates or changes the offer. Fields left out keep the current offer's values (or defaults when
   * there is none). The machine is measured again first.
   * @throws UnitError, InvalidPriceError, UnknownGpuError, OfferExceedsMachineError, OfferBelowCommittedError
   */
  async onboard(req: OnboardRequest): Promise<ResourcesView> {
    const machine = await this.c.meter.refresh()
    // Read after the await, so that defaults come from the newest offer.
    const current = this.c.ledger.getOffer()
    const reserve = hostReserve(machine, this.init.hostReserve)
    const max = maxOffer(machine, reserve)
    const prices: Prices = { ...DEFAULT_PRICES, ...current?.prices }
    for (const [k, v] of Object.entries(checkPrices(req.prices)))
      if (v !== undefined) prices[k as keyof Prices] = v
    const gpuIndices = req.gpus !== undefined ? checkGpus(req.gpus, machine) : (current?.gpuIndices ?? [])
    const resources: Resources = normalize({
      cpu: req.cpu !== undefined ? parseCpu(req.cpu) : (current?.resources.cpu ?? max.cpu),
      memoryBytes:
        req.memory !== undefined
          ? parseBytes(req.memory)
          : (current?.resources.memoryBytes ?? max.memoryBytes),
      diskBytes:
        req.disk !== undefined
          ? parseBytes(req.disk)
          : (current?.resources.diskBytes ?? Math.min(DEFAULT_DISK_BYTES, max.diskBytes)),
      gpus: gpuIndices.length,
    })
    const have = machineResources(machine)
    const limits: MachineLimit[] = DIMENSIONS.filter((d) => resources[d] > max[d]).map((d) => ({
      dimension: d,
      requested: resources[d],
      machine: have[d],
      hostReserve: reserve[d],
      max: d === 'cpu' ? roundCpu(max[d]) : max[d],
    }))
    if (limits.length > 0) throw new OfferExceedsMachineError(limits)
    const now = this.c.clock.now()
    const offer: Offer = {
      resources,
      prices,
      onboardedAt: current !== undefined && current.withdrawnAt === undefined ? current.onboardedAt : now,
      updatedAt: now,
      gpuIndices,
    }
    await this.c.ledger.setOffer(offer)
    return this.view()
  }

  /**
   * Withdraws the offer: no new bids; what is reserved, locked or allocated runs to its end.
   * @throws NotOnboardedError
   */
  async offboard(): Promise<ResourcesView> {
    await this.c.ledger.withdrawOffer()
    return this.view()
  }

  /** Where everything is. `refresh` measures the machine again instead of using the cached measurement. */
  async view(opts: { refresh?: boolean } = {}): Promise<ResourcesView> {
    const machine = opts.refresh === true ? await this.c.meter.refresh() : await this.c.meter.get()
    const reserve = hostReserve(machine, this.init.hostReserve)
    const offer = this.c.ledger.getOffer()
    const s = this.c.ledger.summary()
    return {
      status:
        offer === undefined ? 'not-onboarded' : offer.withdrawnAt === undefined ? 'onboarded' : 'offboarded',
      machine,
      machineResources: machineResources(machine),
      hostReserve: reserve,
      maxOffer: maxOffer(machine, reserve),
      offer: offer ?? null,
      onboarded: offer?.resources ?? { ...ZERO },
      free: s.free,
      reserved: s.reserved,
      locked: s.locked,
      allocated: s.allocated,
      entries: this.c.ledger.entries(),
    }
  }
}
