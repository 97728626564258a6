/**
 * The process engine as the engine-compliance suite builds it (`EngineUnderTest`): a
 * ProcessEngine over the state folder, its cgroups under `dms-test`, and
 * workloads running the host's /bin/sh (a `runtime` artifact).
 */
import type { Engine } from '../../../dms/executor/engine.js'
import type { ExecutionSpec } from '../../../dms/executor/executor.js'
import { ProcessEngine } from '../../../dms/executor/process/process-engine.js'
import { silentLogger } from '../../../dms/log.js'
import { SINGLE_MEMBER } from '../../../dms/workload/workload.js'
import type { ComplianceWorkload } from '../../helpers/engine-compliance.js'

export function makeEngine(stateDir: string): Engine {
  return new ProcessEngine(
    { log: silentLogger },
    { workDir: stateDir, cgroupParent: 'dms-test', runtimes: ['/bin/sh'] },
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
          artifact: { kind: 'runtime', path: '/bin/sh' },
          command: ['/bin/sh', '-c', w.script],
          env: {},
          network: w.network === true ? 'outbound' : 'none',
          resources: { cpu: w.cpu, memoryBytes: w.memoryBytes },
        },
      ],
    },
    timeoutSeconds: w.timeoutSeconds,
  }
}
