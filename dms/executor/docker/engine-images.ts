/** The engine's images: whether one is local, and pulling one with progress events. */
import type Docker from 'dockerode'
import { ExecutorUnavailableError, ImageNotFoundError } from '../errors.js'
import type { ExecutionEvent } from '../executor.js'
import { dockerMessage, dockerStatus } from './docker-errors.js'

/** Whether the engine has the image (a 404 is "no"; any other failure is thrown). */
export async function hasLocalImage(docker: Docker, image: string): Promise<boolean> {
  try {
    await docker.getImage(image).inspect()
    return true
  } catch (err) {
    if (dockerStatus(err) === 404) return false
    throw err
  }
}

/**
 * Pulls the image, reporting each progress line as a `pulling` event. `engine` wraps the call (an
 * engine that does not answer is ExecutorUnavailableError); any other failure is ImageNotFoundError.
 */
export async function pullImage(
  docker: Docker,
  image: string,
  emit: (e: ExecutionEvent) => void,
  engine: <T>(call: () => Promise<T>) => Promise<T>,
): Promise<void> {
  try {
    const stream = await engine(() => docker.pull(image))
    await new Promise<void>((resolve, reject) => {
      docker.modem.followProgress(
        stream,
        (err: Error | null) => (err === null ? resolve() : reject(err)),
        (p: { status?: string; progress?: string; id?: string }) =>
          emit({
            type: 'pulling',
            status: [p.id, p.status].filter(Boolean).join(' '),
            ...(p.progress !== undefined ? { progress: p.progress } : {}),
          }),
      )
    })
  } catch (err) {
    if (err instanceof ExecutorUnavailableError) throw err
    throw new ImageNotFoundError(image, dockerMessage(err))
  }
}
