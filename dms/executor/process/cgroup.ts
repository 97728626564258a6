/**
 * One cgroup per allocation for the process engine (specs/executor.md, "The process engine"), on
 * cgroup v1 (one folder per controller: cpu, cpuacct, memory, pids) or v2 (one folder, the
 * controllers enabled in its parent). The same calls on both: create with the limits, the folders
 * a process joins, usage, whether the OOM killer struck, kill everything, remove.
 */
import { promises as fs } from 'node:fs'
import { join } from 'node:path'

/** Where the cgroup file systems are. @default '/sys/fs/cgroup' */
export const CGROUP_ROOT = '/sys/fs/cgroup'

const V1_CONTROLLERS = ['cpu', 'cpuacct', 'memory', 'pids'] as const
const V2_CONTROLLERS = ['cpu', 'memory', 'pids'] as const
/** The CFS period the CPU quota is measured in (Docker's default, 100 ms). */
const PERIOD_US = 100_000

export type CgroupVersion = 1 | 2

export interface CgroupLimits {
  /** Cores (fractions allowed). */
  cpu: number
  memoryBytes: number
  pids: number
}

export interface CgroupUsage {
  cpuSeconds: number
  memoryBytes: number
  peakMemoryBytes: number
}

/** Which cgroup version this host runs the engine's cgroups on, or what is missing for it. */
export async function detectCgroups(
  root = CGROUP_ROOT,
): Promise<{ version: CgroupVersion } | { missing: string }> {
  const v1Missing: string[] = []
  for (const c of V1_CONTROLLERS) {
    if (!(await exists(join(root, c, 'cgroup.procs')))) v1Missing.push(c)
  }
  if (v1Missing.length === 0) return { version: 1 }
  const controllers = await fs.readFile(join(root, 'cgroup.controllers'), 'utf8').catch(() => undefined)
  if (controllers === undefined) {
    return { missing: `cgroup controller${v1Missing.length > 1 ? 's' : ''} ${v1Missing.join(', ')}` }
  }
  const have = new Set(controllers.trim().split(/\s+/))
  const lacking = V2_CONTROLLERS.filter((c) => !have.has(c))
  if (lacking.length > 0)
    return { missing: `cgroup v2 controller${lacking.length > 1 ? 's' : ''} ${lacking.join(', ')}` }
  return { version: 2 }
}

/** One allocation's cgroup (v1: a folder under each controller; v2: one folder). */
export class Cgroup {
  constructor(
    readonly version: CgroupVersion,
    /** Path below the controllers' roots, e.g. `dms/dms-<allocationId>`. */
    readonly path: string,
    private readonly root = CGROUP_ROOT,
  ) {}

  /** The folders whose `cgroup.procs` a process writes itself into to join. */
  dirs(): string[] {
    return this.version === 1
      ? V1_CONTROLLERS.map((c) => join(this.root, c, this.path))
      : [join(this.root, this.path)]
  }

  private dir(controller: (typeof V1_CONTROLLERS)[number]): string {
    return this.version === 1 ? join(this.root, controller, this.path) : join(this.root, this.path)
  }

  /**
   * The CPU quota as a file and the value to write there. Written by the sandbox's init once its
   * root is built (sandbox-script.ts), as Docker's is tightened after the start (cpu-limit.ts):
   * at 0.1 of a core, the mounts alone would take seconds.
   */
  cpuLimit(cpu: number): { file: string; value: string } {
    const quota = Math.max(1000, Math.round(cpu * PERIOD_US))
    return this.version === 2
      ? { file: join(this.dir('cpu'), 'cpu.max'), value: `${quota} ${PERIOD_US}` }
      : { file: join(this.dir('cpu'), 'cpu.cfs_quota_us'), value: String(quota) }
  }

  /**
   * Creates the cgroup (and its parents) and sets the limits: memory without swap and pids; the
   * CPU period, its quota left unlimited until `cpuLimit` is written.
   */
  async create(limits: Omit<CgroupLimits, 'cpu'>): Promise<void> {
    if (this.version === 2) {
      await this.enableV2Parents()
      await fs.mkdir(join(this.root, this.path), { recursive: true })
      await this.write('memory', 'memory.max', String(limits.memoryBytes))
      // Absent when the kernel has no swap accounting: then there is no swap to limit.
      await this.write('memory', 'memory.swap.max', '0').catch(ignoreMissing)
      await this.write('pids', 'pids.max', String(limits.pids))
      return
    }
    for (const d of this.dirs()) await fs.mkdir(d, { recursive: true })
    await this.write('cpu', 'cpu.cfs_period_us', String(PERIOD_US))
    await this.write('memory', 'memory.limit_in_bytes', String(limits.memoryBytes))
    // memsw (memory + swap) exists only with swap accounting; equal to the memory limit: no swap.
    await this.write('memory', 'memory.memsw.limit_in_bytes', String(limits.memoryBytes)).catch(ignoreMissing)
    await this.write('pids', 'pids.max', String(limits.pids))
  }

  /** CPU used, memory now and at its peak (0 where the kernel does not say). */
  async usage(): Promise<CgroupUsage> {
    if (this.version === 2) {
      const stat = await this.read('cpu', 'cpu.stat')
      const usec = Number(/^usage_usec (\d+)$/m.exec(stat ?? '')?.[1] ?? 0)
      const current = Number((await this.read('memory', 'memory.current')) ?? 0)
      const peak = Number((await this.read('memory', 'memory.peak')) ?? current)
      return { cpuSeconds: usec / 1e6, memoryBytes: current, peakMemoryBytes: peak }
    }
    const ns = Number((await this.read('cpuacct', 'cpuacct.usage')) ?? 0)
    const current = Number((await this.read('memory', 'memory.usage_in_bytes')) ?? 0)
    const peak = Number((await this.read('memory', 'memory.max_usage_in_bytes')) ?? current)
    return { cpuSeconds: ns / 1e9, memoryBytes: current, peakMemoryBytes: peak }
  }

  /** Whether the OOM killer killed a process of this cgroup. */
  async oomKilled(): Promise<boolean> {
    const file = this.version === 2 ? 'memory.events' : 'memory.oom_control'
    const text = (await this.read('memory', file)) ?? ''
    return Number(/^oom_kill (\d+)$/m.exec(text)?.[1] ?? 0) > 0
  }

  /** The pids in the cgroup now (host pids). */
  async pids(): Promise<number[]> {
    const text = (await this.read('pids', 'cgroup.procs')) ?? ''
    return text
      .split('\n')
      .filter((l) => l !== '')
      .map(Number)
  }

  /**
   * SIGKILLs every process in the cgroup, until none is left (a fork between the read and the
   * kill is caught by the next round). Returns whether any was found.
   */
  async killAll(): Promise<boolean> {
    let found = false
    for (let round = 0; round < 50; round++) {
      const pids = await this.pids()
      if (pids.length === 0) return found
      found = true
      for (const pid of pids) {
        try {
          process.kill(pid, 'SIGKILL')
        } catch {
          // Gone already.
        }
      }
      await new Promise((r) => setTimeout(r, 20))
    }
    return found
  }

  /** Removes the cgroup's folders (empty: after `killAll`); a missing one is fine. */
  async remove(): Promise<void> {
    for (const d of this.dirs()) {
      for (let i = 0; i < 20; i++) {
        try {
          await fs.rmdir(d)
          break
        } catch (err) {
          const code = (err as NodeJS.ErrnoException).code
          if (code === 'ENOENT') break
          if (code !== 'EBUSY' || i === 19) throw err
          // The last process is still being torn down by the kernel.
          await new Promise((r) => setTimeout(r, 25))
        }
      }
    }
  }

  /** v2: every folder above the cgroup lets its children use cpu, memory and pids. */
  private async enableV2Parents(): Promise<void> {
    const parts = this.path.split('/').slice(0, -1)
    let at = this.root
    await fs.writeFile(join(at, 'cgroup.subtree_control'), '+cpu +memory +pids').catch(() => {})
    for (const p of parts) {
      at = join(at, p)
      await fs.mkdir(at, { recursive: true })
      await fs.writeFile(join(at, 'cgroup.subtree_control'), '+cpu +memory +pids')
    }
  }

  private async write(
    controller: (typeof V1_CONTROLLERS)[number],
    file: string,
    value: string,
  ): Promise<void> {
    await fs.writeFile(join(this.dir(controller), file), value)
  }

  private async read(controller: (typeof V1_CONTROLLERS)[number], file: string): Promise<string | undefined> {
    return await fs.readFile(join(this.dir(controller), file), 'utf8').catch(() => undefined)
  }
}

async function exists(path: string): Promise<boolean> {
  return await fs.access(path).then(
    () => true,
    () => false,
  )
}

function ignoreMissing(err: unknown): void {
  const code = (err as NodeJS.ErrnoException).code
  if (code !== 'ENOENT' && code !== 'EACCES') throw err
}
