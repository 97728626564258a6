/**
 * The machine's GPUs as NVIDIA's own tool lists them (specs/resources.md, "GPUs by index"):
 * `nvidia-smi --query-gpu=index,name,memory.total,uuid`. Its index is the one pinning, the
 * metering (`-i`) and `CUDA_VISIBLE_DEVICES` use, which systeminformation's list order need not be.
 * Its output is read as untrusted text: bounded in size, time and count, a bad line skipped.
 */
import { execFile } from 'node:child_process'
import type { MachineInfo } from './types.js'

/** At most this many GPUs are read; more lines are ignored. */
export const MAX_GPUS = 64
/** A GPU's model name longer than this (or not printable ASCII) skips its line. */
export const MAX_GPU_NAME = 128
/** nvidia-smi's largest memory figure read, in MiB (16 TiB); above it the line is skipped. */
const MAX_MEMORY_MIB = 16 * 1024 * 1024

/** The query `parseNvidiaSmiGpus` reads. */
export const GPU_LIST_ARGS = ['--query-gpu=index,name,memory.total,uuid', '--format=csv,noheader,nounits']

const INDEX = /^\d{1,3}$/
const NAME = new RegExp(`^[\\x20-\\x7e]{1,${MAX_GPU_NAME}}$`)
const MIB = /^\d{1,9}$/
const UUID = /^[A-Za-z0-9-]{1,80}$/

/**
 * The GPUs in nvidia-smi's `index, name, memory.total (MiB), uuid` lines: at most `MAX_GPUS`, each
 * index once (the first line wins), a line of another shape (`[N/A]` memory, an error, a name too
 * long or not printable) left out. A uuid that is not one (`[N/A]`) is omitted, not fatal.
 */
export function parseNvidiaSmiGpus(text: string): MachineInfo['gpus'] {
  const gpus: MachineInfo['gpus'] = []
  const seen = new Set<number>()
  for (const line of text.split('\n')) {
    if (gpus.length >= MAX_GPUS) break
    const fields = line.split(',').map((f) => f.trim())
    // A name may hold a comma: the index is first, memory and uuid last.
    if (fields.length < 4) continue
    const [index, ...rest] = fields
    const uuid = rest.pop() as string
    const memory = rest.pop() as string
    const name = rest.join(', ')
    if (!INDEX.test(index) || !NAME.test(name) || !MIB.test(memory)) continue
    const i = Number(index)
    const mib = Number(memory)
    if (seen.has(i) || mib > MAX_MEMORY_MIB) continue
    seen.add(i)
    gpus.push({
      index: i,
      vendor: 'NVIDIA',
      model: name,
      memoryBytes: mib * 1024 * 1024,
      ...(UUID.test(uuid) ? { uuid } : {}),
    })
  }
  return gpus.sort((a, b) => a.index - b.index)
}

/**
 * Asks the nvidia-smi at `path` for the GPU list, bounded in time (10 s: its first call on a
 * GPU host takes about 3 s) and output (64 KiB). Undefined when it cannot run or fails (no driver):
 * the caller falls back to another probe.
 */
export function nvidiaSmiGpus(path: string): Promise<MachineInfo['gpus'] | undefined> {
  return new Promise((resolve) => {
    execFile(path, GPU_LIST_ARGS, { timeout: 10_000, maxBuffer: 64 * 1024, env: {} }, (err, stdout) =>
      resolve(err === null ? parseNvidiaSmiGpus(stdout) : undefined),
    )
  })
}
