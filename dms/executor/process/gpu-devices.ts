/**
 * The GPU device nodes a process-engine run gets (specs/executor.md, "GPUs"): exactly the pinned
 * `/dev/nvidiaN`, plus the driver's shared nodes that exist (`nvidiactl`, `nvidia-uvm`,
 * `nvidia-uvm-tools`, `nvidia-modeset`), each bound into the sandbox's own `/dev` under its name;
 * and the environment that tells CUDA which GPUs those are.
 */
import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { InvalidSpecError } from '../errors.js'

/** The driver's nodes every GPU run needs, bound when present. */
export const GPU_SHARED_NODES = ['nvidiactl', 'nvidia-uvm', 'nvidia-uvm-tools', 'nvidia-modeset']

const GPU_NODE = /^nvidia(\d{1,3})$/

/** The GPU indices whose `nvidiaN` node is in `devDir`, ascending. */
export async function hostGpus(devDir: string): Promise<number[]> {
  const names = await fs.readdir(devDir).catch(() => [] as string[])
  return names
    .flatMap((n) => {
      const m = GPU_NODE.exec(n)
      return m === null ? [] : [Number(m[1])]
    })
    .sort((a, b) => a - b)
}

const exists = (path: string): Promise<boolean> =>
  fs.lstat(path).then(
    () => true,
    () => false,
  )

/**
 * The host paths to bind for `indices` (empty without GPUs): each `nvidiaN`, then the shared nodes
 * present. A GPU whose node is missing is refused before anything is made.
 * @throws InvalidSpecError when a pinned GPU has no node in `devDir`
 */
export async function gpuDeviceNodes(devDir: string, indices: readonly number[]): Promise<string[]> {
  if (indices.length === 0) return []
  const nodes: string[] = []
  for (const i of indices) {
    const node = join(devDir, `nvidia${i}`)
    if (!(await exists(node)))
      throw new InvalidSpecError('gpuIndices', `holds GPU ${i}, which this host has not`)
    nodes.push(node)
  }
  for (const n of GPU_SHARED_NODES) if (await exists(join(devDir, n))) nodes.push(join(devDir, n))
  return nodes
}

/**
 * What CUDA and NVIDIA's tools read to see only the pinned GPUs: their host indices, in PCI bus
 * order (nvidia-smi's), since CUDA's own default order (fastest first) may differ.
 */
export function gpuEnv(indices: readonly number[]): Record<string, string> {
  if (indices.length === 0) return {}
  const list = indices.join(',')
  return { CUDA_DEVICE_ORDER: 'PCI_BUS_ID', CUDA_VISIBLE_DEVICES: list, NVIDIA_VISIBLE_DEVICES: list }
}
