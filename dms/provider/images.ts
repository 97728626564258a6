/**
 * The provider's view of a bid request's image: refused for its form or its registry before the
 * engine is ever asked, then looked up through a short-lived, bounded cache, so that bid requests
 * (one peer's flood of them, or many requesters asking for the same image) cost at most one engine
 * look-up per image per `ttlMs`. A runtime (`runtime:<path>`, artifact-name.ts) is looked up the
 * same way, by its name: the engine that offers it says whether it is offered and present. Spec:
 * specs/job-spec.md ("Provider policy").
 */
import type { Clock } from '../../actors/clock.js'
import type { Logger } from 'pino'
import type { ArtifactRef, Engine } from '../executor/engine.js'
import { runtimeOfName } from '../workload/artifact-name.js'
import { DEFAULT_REGISTRY, InvalidImageRefError, parseImageRef } from '../workload/image-ref.js'

export interface ImageCheckComponents {
  /** The engine's answer to "can this image be run here" (`Engine.hasArtifact`). */
  executor: Pick<Engine, 'hasArtifact'>
  clock: Pick<Clock, 'now'>
  log: Logger
}

export interface ImageCheckInit {
  /**
   * Registries whose images this provider looks up or pulls. A reference naming any other is
   * declined before the engine is asked: a requester must not choose where the engine connects.
   * @default ['docker.io'] (where references without a registry, like `dms-test:1`, live)
   */
  registries?: string[]
  /** How long a look-up's answer is reused. @default 10000 */
  ttlMs?: number
  /** Most answers kept; the oldest goes first. @default 1024 */
  maxEntries?: number
}

interface Entry {
  at: number
  answer: Promise<boolean>
}

export class ImageCheck {
  private readonly registries: Set<string>
  private readonly ttlMs: number
  private readonly maxEntries: number
  private readonly cache = new Map<string, Entry>()
  /** Engine look-ups made (cache misses), for tests and metrics. */
  lookups = 0

  constructor(
    private readonly c: ImageCheckComponents,
    init: ImageCheckInit = {},
  ) {
    this.registries = new Set(init.registries ?? [DEFAULT_REGISTRY])
    this.ttlMs = init.ttlMs ?? 10_000
    this.maxEntries = init.maxEntries ?? 1024
  }

  /**
   * Why this provider will not consider `image` at all (not a reference, or a registry it does not
   * use), or undefined. Never asks the engine.
   */
  refusal(image: string): string | undefined {
    // A runtime is judged by the engine that offers it (its allow-list), in `canRun`.
    if (runtimeOfName(image) !== undefined) return undefined
    try {
      const ref = parseImageRef(image)
      if (!this.registries.has(ref.registry))
        return `image registry ${ref.registry} is not used by this provider`
      return undefined
    } catch (err) {
      if (err instanceof InvalidImageRefError) return `invalid image: ${err.problem}`
      throw err
    }
  }

  /**
   * Whether the engine can run `image` (which `refusal` accepted): its answer from the last
   * `ttlMs`, or a new look-up shared by every caller meanwhile. An engine error counts as "no".
   */
  async canRun(image: string): Promise<boolean> {
    const runtime = runtimeOfName(image)
    const key = runtime !== undefined ? image : parseImageRef(image).canonical
    const now = this.c.clock.now()
    const hit = this.cache.get(key)
    if (hit !== undefined && now - hit.at < this.ttlMs) return hit.answer
    this.cache.delete(key)
    this.lookups++
    const artifact: ArtifactRef =
      runtime !== undefined ? { kind: 'runtime', ref: runtime } : { kind: 'image', ref: image }
    const answer = this.c.executor.hasArtifact(artifact).catch((err: unknown) => {
      this.c.log.debug({ err, image }, 'image look-up failed')
      return false
    })
    this.cache.set(key, { at: now, answer })
    for (const old of this.cache.keys()) {
      if (this.cache.size <= this.maxEntries) break
      this.cache.delete(old)
    }
    return answer
  }
}
