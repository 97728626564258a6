/**
 * The host side of an allocation's files (specs/executor.md, "One container per allocation"):
 * `<workDir>/<allocationId>/outputs`, the container's /outputs with the run's disk quota mounted on
 * it, and `<archiveDir>/<allocationId>.tar`, the outputs' archive handed to the caller.
 */
import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import type { Logger } from 'pino'
import { AllocationBusyError } from '../errors.js'
import type { AllocationId, ExecutionSpec } from '../executor.js'
import { mountQuota, releaseQuota } from './disk-quota.js'
import { removeTree } from './remove-tree.js'

export interface WorkDirsInit {
  workDir: string
  archiveDir: string
  /** `uid:gid` of the workload, who must be able to write /outputs. */
  user: string
  /** Whether quotas are mounted (root and loop devices). */
  diskQuota: boolean
}

/** The host folders of a pod's allocation. */
export interface PodDirs {
  /** The quota mount; collected as the one archive (`<member>/...`). */
  outputs: string
  /** Bind-mounted at /pod in every member. */
  pod: string
  /** Each member's /outputs, by member name. */
  members: Map<string, string>
}

export class WorkDirs {
  constructor(private readonly init: WorkDirsInit) {}

  private dirsOf(allocationId: AllocationId): { alloc: string; outputs: string; disk: string } {
    const alloc = join(this.init.workDir, allocationId)
    return { alloc, outputs: join(alloc, 'outputs'), disk: join(alloc, 'disk.img') }
  }

  /** The host folder that is the allocation's /outputs. */
  outputsOf(allocationId: AllocationId): string {
    return this.dirsOf(allocationId).outputs
  }

  archiveOf(allocationId: AllocationId): string {
    return join(this.init.archiveDir, `${allocationId}.tar`)
  }

  /** The kernel quota a run of `spec` gets on /outputs, or undefined when there is none. */
  quotaOf(spec: ExecutionSpec): number | undefined {
    return this.init.diskQuota && (spec.diskBytes ?? 0) > 0 ? spec.diskBytes : undefined
  }

  /**
   * Takes the allocation's work folder. An existing one belongs to another run (or a crash):
   * AllocationBusyError, and nothing is touched. Once taken, `release` must follow.
   */
  async claim(allocationId: AllocationId): Promise<void> {
    const { alloc } = this.dirsOf(allocationId)
    await fs.mkdir(this.init.workDir, { recursive: true })
    try {
      await fs.mkdir(alloc) // not recursive: an existing folder belongs to another run
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
      throw new AllocationBusyError(
        allocationId,
        `its work folder ${alloc} exists (another run, or one left by a crash: remove it if no dms is running it)`,
      )
    }
  }

  /** Creates the (empty) folder that is /outputs: enough for the engine to create the container. */
  async makeOutputs(allocationId: AllocationId): Promise<string> {
    const { outputs } = this.dirsOf(allocationId)
    await fs.mkdir(outputs)
    return outputs
  }

  /**
   * Mounts the quota on /outputs (made by `makeOutputs`) and lets the workload's user write it.
   * Must be done before the container starts (the engine binds the folder at start, not at create).
   */
  async limitOutputs(spec: ExecutionSpec): Promise<void> {
    const dirs = this.dirsOf(spec.allocationId)
    const quota = this.quotaOf(spec)
    if (quota !== undefined) await mountQuota(dirs.outputs, dirs.disk, quota)
    await this.giveToWorkload(dirs.outputs)
  }

  /**
   * A pod's folders, all inside the one quota mount: `outputs/<member>` (each member's /outputs)
   * and `outputs/.pod` (the shared /pod; member names never start with a dot).
   */
  async preparePod(spec: ExecutionSpec, members: readonly string[]): Promise<PodDirs> {
    // The quota is mounted before the members' folders are made in it (a mount would hide them).
    const outputs = await this.makeOutputs(spec.allocationId)
    await this.limitOutputs(spec)
    const pod = this.scratchOf(spec.allocationId)
    const memberDirs = new Map<string, string>()
    for (const dir of [pod, ...members.map((m) => join(outputs, m))]) {
      await fs.mkdir(dir)
      await this.giveToWorkload(dir)
    }
    for (const m of members) memberDirs.set(m, join(outputs, m))
    return { outputs, pod, members: memberDirs }
  }

  /** The pod's shared folder (inside its outputs, removed before they are collected). */
  scratchOf(allocationId: AllocationId): string {
    return join(this.outputsOf(allocationId), '.pod')
  }

  /** Lets the workload's user write `dir`. */
  private async giveToWorkload(dir: string): Promise<void> {
    const ids = /^(\d+)(?::(\d+))?$/.exec(this.init.user)
    if (process.getuid?.() === 0 && ids !== null) {
      const uid = Number(ids[1])
      await fs.chown(dir, uid, ids[2] !== undefined ? Number(ids[2]) : uid)
      await fs.chmod(dir, 0o755)
    } else {
      // Not root, or a user name we cannot resolve on the host: let anyone write.
      await fs.chmod(dir, 0o777)
    }
  }

  /** Where to write the allocation's archive, with a stale one (a crash before it was taken) gone. */
  async freshArchive(allocationId: AllocationId): Promise<string> {
    const file = this.archiveOf(allocationId)
    await fs.mkdir(this.init.archiveDir, { recursive: true, mode: 0o700 }).catch(() => {})
    await fs.rm(file, { force: true }).catch(() => {})
    return file
  }

  /** Unmounts the quota and removes the work folder, however deep; logs what it could not. */
  async release(allocationId: AllocationId, log: Logger): Promise<void> {
    const dirs = this.dirsOf(allocationId)
    try {
      await releaseQuota(dirs.outputs, dirs.disk)
    } catch (err) {
      log.warn({ err }, 'could not release the disk quota')
      return // never rm -r through a file system that is still mounted
    }
    await removeTree(dirs.alloc).catch((err: unknown) => {
      log.warn({ err, allocDir: dirs.alloc }, 'could not remove the work folder')
    })
  }
}
