/**
 * GPU use during a run (specs/executor.md, "GPUs"): its pinned GPUs' utilisation and memory,
 * sampled through `nvidia-smi` as CPU use is through the cgroup, into the run's usage
 * (`gpuSeconds`: busy GPU-seconds, utilisation × time; `gpuPeakMemoryBytes`: the most memory its
 * GPUs held at once, as sampled). A sample that fails or reads wrong is skipped, never fatal.
 */
import { execFile } from 'node:child_process'
import { promises as fs } from 'node:fs'

/** One GPU's figures at one instant. */
export interface GpuSample {
  index: number
  /** Percent of the last sample period a kernel ran, 0..100. */
  utilization: number
  memoryUsedBytes: number
}

/** Reads the figures of `indices` now. */
export type GpuQuery = (indices: readonly number[]) => Promise<GpuSample[]>

/** Where nvidia-smi is looked for when no path is configured (the GPU hosts: /usr/local/nvidia/bin). */
export const NVIDIA_SMI_PATHS = [
  '/usr/bin/nvidia-smi',
  '/usr/local/nvidia/bin/nvidia-smi',
  '/usr/local/bin/nvidia-smi',
]

/** The first of `paths` that exists, or undefined. */
export async function findNvidiaSmi(
  paths: readonly string[] = NVIDIA_SMI_PATHS,
): Promise<string | undefined> {
  for (const p of paths)
    if (
      await fs.access(p).then(
        () => true,
        () => false,
      )
    )
      return p
  return undefined
}

const LINE = /^\s*(\d{1,3})\s*,\s*(\d{1,3}(?:\.\d+)?)\s*,\s*(\d{1,9})\s*$/

/**
 * Parses `--query-gpu=index,utilization.gpu,memory.used --format=csv,noheader,nounits` (memory in
 * MiB): lines of other shapes (`[N/A]`, errors) and figures out of range are left out.
 */
export function parseNvidiaSmi(text: string): GpuSample[] {
  return text.split('\n').flatMap((line) => {
    const m = LINE.exec(line)
    if (m === null) return []
    const utilization = Number(m[2])
    if (utilization > 100) return []
    return [{ index: Number(m[1]), utilization, memoryUsedBytes: Number(m[3]) * 1024 * 1024 }]
  })
}

/** A query through the `nvidia-smi` at `path`, bounded in time (5 s) and output (64 KiB). */
export function nvidiaSmiQuery(path: string): GpuQuery {
  return (indices) =>
    new Promise((resolve) => {
      execFile(
        path,
        [
          '--query-gpu=index,utilization.gpu,memory.used',
          '--format=csv,noheader,nounits',
          '-i',
          indices.join(','),
        ],
        { timeout: 5000, maxBuffer: 64 * 1024, env: {} },
        (err, stdout) => resolve(err === null ? parseNvidiaSmi(stdout) : []),
      )
    })
}

/** Adds up a run's GPU samples: each sample's utilisation counts for the time since the last. */
export class GpuMeter {
  private busySeconds = 0
  private peak = 0
  private last: number | undefined

  constructor(
    private readonly query: GpuQuery,
    private readonly indices: readonly number[],
  ) {}

  /** Takes one sample at `now` (ms); the first only starts the count. */
  async sample(now: number): Promise<void> {
    const want = new Set(this.indices)
    const samples = (await this.query(this.indices)).filter((s) => want.has(s.index))
    if (samples.length === 0) return
    const since = this.last
    this.last = now
    this.peak = Math.max(
      this.peak,
      samples.reduce((n, s) => n + s.memoryUsedBytes, 0),
    )
    if (since === undefined || now <= since) return
    const seconds = (now - since) / 1000
    for (const s of samples) this.busySeconds += (s.utilization / 100) * seconds
  }

  /** What the samples add up to, for the run's usage. */
  usage(): { gpuSeconds: number; gpuPeakMemoryBytes: number } {
    return { gpuSeconds: Math.round(this.busySeconds * 1000) / 1000, gpuPeakMemoryBytes: this.peak }
  }
}

/**
 * A run's GPU meter in its polling loop: one sample at a time, never awaited there (nvidia-smi may
 * take a while and the logs must keep flowing), and a last one at the end.
 */
export class PolledGpuMeter {
  private pending: Promise<void> | undefined

  constructor(private readonly meter: GpuMeter) {}

  tick(now: number): void {
    this.pending ??= this.meter.sample(now).finally(() => (this.pending = undefined))
  }

  async end(now: number): Promise<{ gpuSeconds: number; gpuPeakMemoryBytes: number }> {
    await this.pending
    await this.meter.sample(now)
    return this.meter.usage()
  }
}
