import { delay, type Clock } from '../../../actors/clock.js'
import type Docker from 'dockerode'
import type { Logger } from 'pino'

/** What the samples saw; zeros when no sample could be taken (e.g. a job shorter than one request). */
export interface SampledUsage {
  cpuSeconds: number
  peakMemoryBytes: number
}

/**
 * Samples a running container's stats (one-shot, no streaming) every `intervalMs` until stopped.
 *
 * The engine cannot be asked once the container has exited (its cgroup is gone), so the last cpu
 * total seen and the highest memory seen are what we report. On cgroup v1 `max_usage` is the
 * cgroup's own high-water mark, so the memory peak is exact whenever one sample landed.
 *
 * Measured on engine 20.10: the engine's stats collector refreshes once a second; the first
 * request answers at once, later ones wait for the next refresh (up to 1 s). So cpu time is known
 * to within about a second, and a job shorter than that reports (almost) none.
 */
export class StatsSampler {
  private readonly controller = new AbortController()
  private usage: SampledUsage = { cpuSeconds: 0, peakMemoryBytes: 0 }
  private loop: Promise<void> | undefined

  constructor(
    private readonly container: Docker.Container,
    private readonly log: Logger,
    private readonly intervalMs: number,
    private readonly clock: Clock,
    /** Told each sample's totals so far (live usage). */
    private readonly onSample?: (u: SampledUsage) => void,
  ) {}

  start(): void {
    this.loop ??= this.run()
  }

  /** Stops sampling and returns what was seen. Does not wait for a request in flight. */
  stop(): SampledUsage {
    this.controller.abort()
    return { ...this.usage }
  }

  private async run(): Promise<void> {
    const signal = this.controller.signal
    while (!signal.aborted) {
      try {
        const stats = await this.container.stats({ stream: false, 'one-shot': true })
        if (!signal.aborted) this.record(stats)
      } catch (err) {
        this.log.debug({ err }, 'stats sample failed')
      }
      try {
        await delay(this.intervalMs, { clock: this.clock, signal })
      } catch {
        return
      }
    }
  }

  private record(stats: Docker.ContainerStats): void {
    // An exited container answers with an empty sample: keep what earlier samples saw.
    const cpuNs = stats.cpu_stats?.cpu_usage?.total_usage ?? 0
    const memory = Math.max(stats.memory_stats?.max_usage ?? 0, stats.memory_stats?.usage ?? 0)
    this.usage = {
      cpuSeconds: Math.max(this.usage.cpuSeconds, cpuNs / 1e9),
      peakMemoryBytes: Math.max(this.usage.peakMemoryBytes, memory),
    }
    this.onSample?.({ ...this.usage })
  }
}
