/**
 * Watches one started container to its end: its output into capped captures, its timeout (counted
 * from `startedAt`), cancellation, an outside stop (a pod stopping its other members), usage
 * samples. What it returns is what ran; outputs are collected by the caller (run-result.ts).
 */
import type Docker from 'dockerode'
import { delay, type Clock } from '../../../actors/clock.js'
import type { Logger } from 'pino'
import type { ExecutionEvent, ResourceUsage } from '../executor.js'
import { dockerMessage } from './docker-errors.js'
import { captureOutput } from '../common/log-capture.js'
import { outOfMemory, wallSeconds, type StopReason } from '../common/outcome.js'
import { StatsSampler } from './stats-sampler.js'

/** How long to wait for the output stream to drain once the container has exited. */
const STREAM_DRAIN_MS = 2000

export type OutputStream = NodeJS.ReadableStream & Partial<{ destroy: () => void }>

export interface SuperviseInit {
  clock: Clock
  log: Logger
  maxLogBytes: number
  statsIntervalMs: number
  timeoutSeconds: number
  /** When the container started (ms), from which the timeout counts. */
  startedAt: number
  /** The container's multiplexed output (attach, or the engine's log on reattach). */
  stream: OutputStream
  emit: (event: ExecutionEvent) => void
  signal?: AbortSignal
}

/** A container that ended, before its outputs are looked at. */
export interface Ended {
  exitCode: number
  stopRequested: StopReason | undefined
  killed: boolean
  oomKilled: boolean
  usage: ResourceUsage
  stdout: string
  stderr: string
  truncated: boolean
}

export interface Supervised {
  /** Kills the container for `reason` (the first reason asked wins). */
  stop(reason: StopReason): void
  /** Settles once the container has exited and its output drained. */
  ended: Promise<Ended>
}

export function supervise(container: Docker.Container, init: SuperviseInit): Supervised {
  const { clock, log, emit, signal } = init
  let requested: StopReason | undefined
  let killed: Promise<boolean> = Promise.resolve(false)
  const stop = (reason: StopReason): void => {
    if (requested !== undefined) return
    requested = reason
    killed = kill(container, log)
  }
  const ended = (async (): Promise<Ended> => {
    const { stdout, stderr } = captureOutput(init.stream, init.maxLogBytes, emit, () =>
      log.info(
        { maxLogBytes: init.maxLogBytes },
        'output truncated: stdout and stderr over the cap, no longer read',
      ),
    )
    const drained = new Promise<void>((resolve) => {
      init.stream.once('end', resolve)
      init.stream.once('close', resolve)
      init.stream.once('error', () => resolve())
    })
    const onAbort = (): void => stop('cancelled')
    signal?.addEventListener('abort', onAbort, { once: true })
    const sampler = new StatsSampler(container, log, init.statsIntervalMs, clock, (u) =>
      emit({ type: 'usage', cpuSeconds: u.cpuSeconds, memoryBytes: u.peakMemoryBytes }),
    )
    const timer = clock.setTimeout(
      () => stop('timed_out'),
      init.startedAt + init.timeoutSeconds * 1000 - clock.now(),
    )
    try {
      if (signal?.aborted === true) stop('cancelled')
      sampler.start()
      const { StatusCode: exitCode } = (await container.wait()) as { StatusCode: number }
      const measuredWall = (clock.now() - init.startedAt) / 1000
      clock.clearTimeout(timer)
      const sampled = sampler.stop()
      const drainWait = new AbortController()
      await Promise.race([drained, delay(STREAM_DRAIN_MS, { clock, signal: drainWait.signal })])
      drainWait.abort()
      stdout.flushText()
      stderr.flushText()
      const wasKilled = await killed
      // The run happened whatever the engine says next: without its record, our own clock counts.
      const info: Partial<Docker.ContainerInspectInfo> = await container.inspect().catch((err: unknown) => {
        log.warn({ err: dockerMessage(err) }, 'could not inspect the exited container')
        return {}
      })
      const state: Partial<Docker.ContainerInspectInfo['State']> = info.State ?? {}
      emit({ type: 'exited', exitCode })
      return {
        exitCode,
        stopRequested: requested,
        killed: wasKilled,
        oomKilled: outOfMemory({
          engineSaid: state.OOMKilled === true,
          exitCode,
          killedByUs: wasKilled,
          peakMemoryBytes: sampled.peakMemoryBytes,
          memoryLimitBytes: info.HostConfig?.Memory ?? 0,
        }),
        usage: {
          wallSeconds: wallSeconds(state, measuredWall),
          cpuSeconds: sampled.cpuSeconds,
          peakMemoryBytes: sampled.peakMemoryBytes,
        },
        stdout: stdout.text(),
        stderr: stderr.text(),
        truncated: stdout.truncated || stderr.truncated,
      }
    } finally {
      clock.clearTimeout(timer)
      sampler.stop()
      signal?.removeEventListener('abort', onAbort)
      init.stream.destroy?.()
    }
  })()
  return { stop, ended }
}

/** SIGKILL; false when the container was no longer running. */
async function kill(container: Docker.Container, log: Logger): Promise<boolean> {
  try {
    await container.kill({ signal: 'SIGKILL' })
    return true
  } catch (err) {
    log.debug({ err: dockerMessage(err) }, 'kill: container not running')
    return false
  }
}
