/**
 * Workloads for executor tests, in the words the tests think in: one container (a pod of one) or
 * a pod's member, from an image, a command and a share.
 */
import type { ExecutionSpec } from '../../dms/executor/executor.js'
import type { Workload, WorkloadMember } from '../../dms/workload/workload.js'

/** One container: what `container()` and `member()` take. */
export interface ContainerInit {
  image: string
  command: string[]
  env?: Record<string, string>
  network?: boolean
  cpu: number
  memoryBytes: number
  gpus?: number
}

/** A pod member named `name`. */
export function member(name: string, c: ContainerInit): WorkloadMember {
  return {
    name,
    artifact: { kind: 'image', ref: c.image },
    command: c.command,
    env: c.env ?? {},
    network: c.network === true ? 'outbound' : 'none',
    resources: {
      cpu: c.cpu,
      memoryBytes: c.memoryBytes,
      ...((c.gpus ?? 0) > 0 ? { gpus: { count: c.gpus ?? 0 } } : {}),
    },
  }
}

/** A plain job: a workload of one member. */
export const container = (c: ContainerInit): Workload => ({ members: [member('main', c)] })

/** A run spec of one container, its fields flat as tests write them. */
export type ContainerSpecInit = Omit<ExecutionSpec, 'workload'> & ContainerInit

/** The ExecutionSpec of one container: the container's fields become the workload. */
export function containerSpec(init: ContainerSpecInit): ExecutionSpec {
  const { image, command, env, network, cpu, memoryBytes, gpus, ...run } = init
  return { ...run, workload: container({ image, command, env, network, cpu, memoryBytes, gpus }) }
}

/** The workload of a plain job that matches contract terms: their image and resources, `command`. */
export function forTerms(
  terms: { image: string; resources: { cpu: number; memoryBytes: number; diskBytes: number; gpus: number } },
  command: string[],
  more: Partial<Pick<WorkloadMember, 'env' | 'network'>> = {},
): Workload {
  const r = terms.resources
  return {
    members: [
      {
        name: 'main',
        artifact: { kind: 'image', ref: terms.image },
        command,
        env: {},
        network: 'none',
        resources: {
          cpu: r.cpu,
          memoryBytes: r.memoryBytes,
          ...(r.diskBytes > 0 ? { diskBytes: r.diskBytes } : {}),
          ...(r.gpus > 0 ? { gpus: { count: r.gpus } } : {}),
        },
        ...more,
      },
    ],
  }
}
