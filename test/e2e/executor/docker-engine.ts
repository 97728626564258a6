/**
 * The Docker engine as the engine-compliance suite builds it (`EngineUnderTest`): a
 * DockerExecutor over the state folder, and workloads running in the test image.
 */
import { basename } from 'node:path'
import { DockerExecutor } from '../../../dms/executor/docker/docker-executor.js'
import type { Engine } from '../../../dms/executor/engine.js'
import type { ExecutionSpec } from '../../../dms/executor/executor.js'
import { silentLogger } from '../../../dms/log.js'
import { SINGLE_MEMBER } from '../../../dms/workload/workload.js'
import type { ComplianceWorkload } from '../../helpers/engine-compliance.js'

const IMAGE = process.env.DMS_TEST_IMAGE ?? 'dms-test:1'

/** The engine's state is its work folder and the containers labelled with an owner named after it. */
export function makeEngine(stateDir: string): Engine {
  return new DockerExecutor(
    { log: silentLogger },
    { workDir: stateDir, owner: `compliance-${basename(stateDir)}` },
  )
}

export function workload(w: ComplianceWorkload): ExecutionSpec {
  return {
    jobId: w.jobId,
    allocationId: w.allocationId,
    workload: {
      members: [
        {
          name: SINGLE_MEMBER,
          artifact: { kind: 'image', ref: IMAGE },
          command: ['sh', '-c', w.script],
          env: {},
          network: w.network === true ? 'outbound' : 'none',
          resources: { cpu: w.cpu, memoryBytes: w.memoryBytes },
        },
      ],
    },
    timeoutSeconds: w.timeoutSeconds,
  }
}
