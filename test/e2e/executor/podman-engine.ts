/**
 * Podman's Docker-compatible API as the engine-compliance suite builds it (`EngineUnderTest`): the
 * same DockerExecutor as for Docker, pointed at the podman socket named by DMS_PODMAN_SOCK (set by
 * the spec; the re-attach child inherits it), with the log driver podman accepts and limits on open
 * files and processes: podman as root asks for about a million of each, which runc cannot set
 * where the host's hard limits are lower (here 20000 and 96364: "error setting rlimits").
 * The processes limit counts every process of the user (nobody) on the host, so it is generous.
 */
import { basename } from 'node:path'
import { DockerExecutor } from '../../../dms/executor/docker/docker-executor.js'
import type { Engine } from '../../../dms/executor/engine.js'
import { silentLogger } from '../../../dms/log.js'

export { workload } from './docker-engine.js'

export function makeEngine(stateDir: string): Engine {
  const socketPath = process.env.DMS_PODMAN_SOCK
  if (socketPath === undefined) throw new Error('DMS_PODMAN_SOCK is not set')
  return new DockerExecutor(
    { log: silentLogger },
    {
      socketPath,
      workDir: stateDir,
      owner: `compliance-${basename(stateDir)}`,
      logDriver: 'k8s-file',
      ulimits: [
        { name: 'nofile', soft: 1024, hard: 1024 },
        { name: 'nproc', soft: 16384, hard: 16384 },
      ],
    },
  )
}
