/**
 * The engine self-check (specs/executor.md, "Docker-API engines"): before a provider bids, one
 * container is created exactly as a job's would be (createOptions: every hardening option, the
 * engine's log driver and ulimits) and started. Its image is empty, so the start fails at the very
 * last step, the runtime's exec of a program that is not there: an engine that got that far
 * accepted everything else (podman refusing the `local` log driver, or ulimits above the host's,
 * fails before). A provider whose engine fails it is unavailable and declines every job with the
 * reason, instead of bidding and failing each one.
 */
import { mkdir, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import type Docker from 'dockerode'
import type { ExecutionSpec } from '../executor.js'
import { createOptions, type ContainerSettings } from './container-config.js'
import { dockerMessage, dockerStatus } from './docker-errors.js'

/** The self-check's image: empty (no file at all), imported once from a 1 KiB empty tar. */
export const SELF_CHECK_IMAGE = 'dms-self-check:1'
/** The program the check asks for, which the empty image does not have. */
const MISSING = '/dms-self-check-absent'
/** What the runtime says when everything up to the exec worked (runc, crun). */
const EXEC_MISSING = /no such file or directory|executable file not found|not found in \$PATH/i

/** Thrown when the engine cannot run a hardened container: `why` says what it refused. */
export class EngineSelfCheckError extends Error {
  override name = 'EngineSelfCheckError'
  readonly code = 'ENGINE_SELF_CHECK_FAILED'
}

async function ensureImage(docker: Docker): Promise<void> {
  try {
    await docker.getImage(SELF_CHECK_IMAGE).inspect()
    return
  } catch (err) {
    if (dockerStatus(err) !== 404) throw err
  }
  // Two 512-byte zero blocks: a tar archive with no entries. The tag goes in `repo` (the API
  // allows it there): podman 4.3 ignores a separate `tag` and names the image `:latest`.
  const progress = await docker.importImage(Readable.from([Buffer.alloc(1024)]), {
    repo: SELF_CHECK_IMAGE,
  })
  await new Promise<void>((resolve, reject) =>
    docker.modem.followProgress(progress, (err: Error | null) => (err === null ? resolve() : reject(err))),
  )
}

/**
 * Runs the check; resolves when the engine runs hardened containers as `settings` ask, rejects
 * with EngineSelfCheckError saying what it refused (any other rejection: the engine did not answer).
 * `workDir` holds the container's (empty) outputs folder while it exists.
 */
export async function selfCheck(
  docker: Docker,
  settings: Omit<ContainerSettings, 'outputsDir' | 'member' | 'podDir'>,
  workDir: string,
): Promise<void> {
  await ensureImage(docker)
  const allocationId = `self-check-${process.pid}-${Date.now().toString(36)}`
  const spec: ExecutionSpec = {
    jobId: allocationId,
    allocationId,
    timeoutSeconds: 10,
    workload: {
      members: [
        {
          name: 'main',
          artifact: { kind: 'image', ref: SELF_CHECK_IMAGE },
          command: [MISSING],
          env: {},
          network: 'none',
          resources: { cpu: 0.1, memoryBytes: 16 * 1024 * 1024 },
        },
      ],
    },
  }
  const outputsDir = join(workDir, allocationId)
  await mkdir(outputsDir, { recursive: true })
  let container: Docker.Container | undefined
  try {
    try {
      container = await docker.createContainer(
        createOptions(spec, spec.workload.members[0], { ...settings, outputsDir }),
      )
    } catch (err) {
      if (dockerStatus(err) === undefined) throw err
      throw new EngineSelfCheckError(
        `the engine refused to create a hardened container: ${dockerMessage(err)}`,
      )
    }
    try {
      await container.start()
    } catch (err) {
      if (dockerStatus(err) === undefined) throw err
      if (EXEC_MISSING.test(dockerMessage(err))) return
      throw new EngineSelfCheckError(`the engine could not start a hardened container: ${dockerMessage(err)}`)
    }
    throw new EngineSelfCheckError(
      `the engine started ${MISSING}, which does not exist: it is not isolating containers`,
    )
  } finally {
    await container?.remove({ force: true, v: true }).catch(() => undefined)
    await rm(outputsDir, { recursive: true, force: true })
  }
}
