/**
 * Measures the machine: CPU, memory, the disk holding the data directory, GPUs, OS and engines.
 * Every probe tolerates failure (a VM without lspci, a container without /proc/cpuinfo...) and
 * falls back to what Node itself knows; `currentLoad()` is avoided (~0.5 s on first call).
 */
import { readFile, realpath, statfs } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import type Si from 'systeminformation'
import { systemClock, type Clock } from '../../actors/clock.js'
import { findNvidiaSmi } from '../executor/common/gpu-meter.js'
import type { EngineCapabilities } from '../workload/capabilities.js'
import { nvidiaSmiGpus } from './nvidia-smi-gpus.js'
import type { MachineInfo } from './types.js'

export interface MeasureOptions {
  /** The node's data directory; the disk reported is the filesystem holding it. */
  dataDir: string
  /** The engines offered, each asked for its capabilities. @default [] (none offered) */
  engines?: ReadonlyArray<{ capabilities(): Promise<EngineCapabilities> }>
  /** Stamps `measuredAt`. @default systemClock */
  clock?: Pick<Clock, 'now'>
  /**
   * The nvidia-smi that lists the GPUs (the provider's `provider.process.nvidiaSmi`); when none is
   * found or it fails, systeminformation's graphics are read instead.
   * @default the first of `NVIDIA_SMI_PATHS` that exists (as the GPU metering looks)
   */
  nvidiaSmi?: string
}

/** systeminformation, loaded at the first measurement: a provider idle since its start never needs it. */
const loadSi = async (): Promise<typeof Si> => (await import('systeminformation')).default

async function attempt<T>(probe: () => Promise<T>): Promise<T | undefined> {
  try {
    return await probe()
  } catch {
    return undefined
  }
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}

/** The first `cpu MHz` in /proc/cpuinfo text, in MHz; undefined if there is none. */
export function parseCpuInfoMHz(text: string): number | undefined {
  const m = /^cpu MHz\s*:\s*([0-9.]+)/m.exec(text)
  const mhz = m === null ? NaN : Number(m[1])
  return Number.isFinite(mhz) && mhz > 0 ? mhz : undefined
}

/**
 * Of `mounts`, the one whose mount point is the longest prefix of `target` (on path-segment
 * boundaries: /data holds /data/x but not /database).
 */
export function mountFor<M extends { mount: string }>(mounts: M[], target: string): M | undefined {
  let best: M | undefined
  for (const m of mounts) {
    const mount = m.mount
    const holds =
      mount === target ||
      mount === path.parse(target).root ||
      target.startsWith(mount.endsWith(path.sep) ? mount : mount + path.sep)
    if (holds && (best === undefined || mount.length > best.mount.length)) best = m
  }
  return best
}

/** The real path of `p`, or of its nearest existing ancestor (the data dir may not exist yet). */
async function existingRealPath(p: string): Promise<string> {
  let current = path.resolve(p)
  for (;;) {
    try {
      return await realpath(current)
    } catch {
      const parent = path.dirname(current)
      if (parent === current) return current
      current = parent
    }
  }
}

async function measureCpu(si: typeof Si): Promise<MachineInfo['cpu']> {
  const cpu = await attempt(() => si.cpu())
  let speedGHz = cpu?.speed ?? 0
  if (!(speedGHz > 0)) {
    // systeminformation reads 0 on some VMs; the kernel still knows the clock.
    const mhz = await attempt(async () => parseCpuInfoMHz(await readFile('/proc/cpuinfo', 'utf8')))
    speedGHz = mhz !== undefined ? mhz / 1000 : (os.cpus()[0]?.speed ?? 0) / 1000
  }
  const model = [cpu?.manufacturer, cpu?.brand].filter((s) => s !== undefined && s !== '').join(' ')
  return {
    cores: cpu !== undefined && cpu.cores > 0 ? cpu.cores : os.availableParallelism(),
    model: model !== '' ? model : (os.cpus()[0]?.model ?? 'unknown'),
    arch: os.arch(),
    speedGHz: Number(speedGHz.toFixed(3)),
  }
}

async function measureDisk(si: typeof Si, dataDir: string): Promise<MachineInfo['disk']> {
  const target = await existingRealPath(dataDir)
  const mounts = await attempt(() => si.fsSize())
  const mount = mountFor(mounts ?? [], target)
  if (mount !== undefined && mount.size > 0) {
    return { path: mount.mount, totalBytes: mount.size, freeBytes: mount.available }
  }
  // No matching mount listed (containers, unusual filesystems): ask the kernel directly.
  const st = await attempt(() => statfs(target))
  return {
    path: target,
    totalBytes: st !== undefined ? st.blocks * st.bsize : 0,
    freeBytes: st !== undefined ? st.bavail * st.bsize : 0,
  }
}

async function measureGpus(si: typeof Si, nvidiaSmi: string | undefined): Promise<MachineInfo['gpus']> {
  const smi = nvidiaSmi ?? (await findNvidiaSmi())
  const listed = smi !== undefined ? await nvidiaSmiGpus(smi) : undefined
  if (listed !== undefined) return listed
  const graphics = await attempt(() => si.graphics())
  return (graphics?.controllers ?? []).map((c, index) => ({
    index,
    vendor: c.vendor ?? '',
    model: c.model ?? '',
    // systeminformation reports VRAM in MiB.
    memoryBytes: (c.vram ?? 0) * 1024 * 1024,
  }))
}

async function measureOs(si: typeof Si): Promise<MachineInfo['os']> {
  const info = await attempt(() => si.osInfo())
  return {
    platform: info?.platform || os.platform(),
    distro: info?.distro || os.type(),
    release: info?.release || os.release(),
    kernel: info?.kernel || os.release(),
  }
}

async function measureEngines(engines: MeasureOptions['engines']): Promise<MachineInfo['engines']> {
  return Promise.all(
    (engines ?? []).map(async (e) => {
      try {
        return await e.capabilities()
      } catch (err) {
        // An engine is meant to say "unavailable" itself; one that throws says nothing else.
        return {
          name: 'unknown',
          available: false,
          why: message(err),
          artifactKinds: [],
          gpus: false,
          networkPolicies: [],
          diskQuota: false,
          fetchesArtifacts: false,
        }
      }
    }),
  )
}

/** Measures the machine. Never throws for a missing probe; unknown values read as 0 or ''. */
export async function measureMachine(opts: MeasureOptions): Promise<MachineInfo> {
  const si = await loadSi()
  const [cpu, memory, disk, gpus, osInfo, engines] = await Promise.all([
    measureCpu(si),
    attempt(() => si.mem()),
    measureDisk(si, opts.dataDir),
    measureGpus(si, opts.nvidiaSmi),
    measureOs(si),
    measureEngines(opts.engines),
  ])
  return {
    cpu,
    memoryBytes: memory !== undefined && memory.total > 0 ? memory.total : os.totalmem(),
    disk,
    gpus,
    os: osInfo,
    engines,
    measuredAt: (opts.clock ?? systemClock).now(),
  }
}

export interface MachineMeterComponents {
  engines?: MeasureOptions['engines']
  clock?: Pick<Clock, 'now'>
}

export interface MachineMeterInit {
  /** See `MeasureOptions.dataDir`. */
  dataDir: string
  /** See `MeasureOptions.nvidiaSmi`. @default the first of `NVIDIA_SMI_PATHS` that exists */
  nvidiaSmi?: string
}

/** Measures once and remembers; concurrent callers share one measurement. */
export class MachineMeter {
  private cached: MachineInfo | undefined
  private inFlight: Promise<MachineInfo> | undefined
  private seq = 0

  constructor(
    private readonly components: MachineMeterComponents,
    private readonly init: MachineMeterInit,
  ) {}

  /** The last measurement, measuring first if there is none. */
  async get(): Promise<MachineInfo> {
    if (this.cached !== undefined) return this.cached
    return this.inFlight ?? this.refresh()
  }

  /** The last measurement, or undefined before the first ends; measures nothing. */
  last(): MachineInfo | undefined {
    return this.cached
  }

  /** Measures again; the newest measurement started is the one kept. A failed one is not cached. */
  async refresh(): Promise<MachineInfo> {
    const seq = ++this.seq
    const run = measureMachine({
      ...this.components,
      dataDir: this.init.dataDir,
      ...(this.init.nvidiaSmi !== undefined ? { nvidiaSmi: this.init.nvidiaSmi } : {}),
    })
    this.inFlight = run
    try {
      const info = await run
      if (seq === this.seq) this.cached = info
      return info
    } finally {
      if (this.inFlight === run) this.inFlight = undefined
    }
  }
}
