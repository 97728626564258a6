/**
 * A disk quota on an allocation's /outputs that the kernel enforces: a sparse file formatted as
 * ext4 and loop-mounted on the folder the container gets as /outputs. Writing past the size fails
 * with ENOSPC inside the container; the host's disk is never filled by a job. Needs root and loop
 * devices (`mount -o loop`); `diskQuotaSupport()` says whether this machine has them.
 *
 * The mount survives a restart of this process (it is the kernel's), so a re-attached allocation
 * finds its outputs where it left them; `releaseQuota` is idempotent.
 */
import { DmsError } from '../../../actors/errors.js'
import { execFile as execFileCb } from 'node:child_process'
import { promises as fs } from 'node:fs'
import { promisify } from 'node:util'

const execFile = promisify(execFileCb)

/** mkfs.ext4 refuses very small file systems; a quota below this is rounded up. */
export const MIN_QUOTA_BYTES = 8 * 1024 * 1024
/** Room for the file system's own metadata, so that about `bytes` stay usable for files. */
const overhead = (bytes: number): number => Math.max(2 * 1024 * 1024, Math.ceil(bytes * 0.03))

export class DiskQuotaError extends DmsError {
  constructor(detail: string) {
    super(
      'DISK_QUOTA_UNAVAILABLE',
      `cannot set up the disk quota (${detail}): the provider needs root and loop devices ` +
        `(mount -o loop), or must run with the disk quota turned off`,
    )
  }
}

/** Whether quotas can be set up here: root, and the mkfs.ext4 and mount programs. */
export async function diskQuotaSupport(): Promise<{ ok: true } | { ok: false; reason: string }> {
  if (process.getuid?.() !== 0) return { ok: false, reason: 'not running as root' }
  try {
    await execFile('mkfs.ext4', ['-V'])
    await execFile('losetup', ['--version'])
  } catch (err) {
    return { ok: false, reason: `missing tool: ${(err as Error).message}` }
  }
  return { ok: true }
}

/**
 * Creates `image` (sparse, about `bytes` usable), formats it and mounts it on `dir` (which must
 * exist and be empty).
 */
export async function mountQuota(dir: string, image: string, bytes: number): Promise<void> {
  const size = Math.max(MIN_QUOTA_BYTES, bytes) + overhead(bytes)
  try {
    await fs.writeFile(image, '', { flag: 'wx', mode: 0o600 })
    await fs.truncate(image, size)
    // No journal and no reserved blocks: a job's scratch space, gone when the job is.
    await execFile('mkfs.ext4', ['-q', '-F', '-m', '0', '-O', '^has_journal', '-E', 'nodiscard', image])
    await execFile('mount', ['-o', 'loop,nosuid,nodev,noexec', image, dir])
    // The job's folder starts empty: mkfs's lost+found would show up as an output folder.
    await fs.rmdir(`${dir}/lost+found`).catch(() => {})
  } catch (err) {
    await fs.rm(image, { force: true }).catch(() => {})
    throw new DiskQuotaError(errorText(err))
  }
}

/** Unmounts `dir` if something is mounted there and removes `image`. */
export async function releaseQuota(dir: string, image: string): Promise<void> {
  if (await isMountPoint(dir)) {
    try {
      await execFile('umount', [dir])
    } catch (err) {
      // Still busy (e.g. a process of ours reading it): detach lazily rather than leak the mount.
      await execFile('umount', ['-l', dir]).catch(() => {
        throw new DiskQuotaError(`umount ${dir}: ${errorText(err)}`)
      })
    }
  }
  await fs.rm(image, { force: true })
}

/** Whether `dir` is a mount point (reads /proc/self/mountinfo; no syscall needs privileges). */
export async function isMountPoint(dir: string): Promise<boolean> {
  let real: string
  try {
    real = await fs.realpath(dir)
  } catch {
    return false
  }
  const info = await fs.readFile('/proc/self/mountinfo', 'utf8').catch(() => '')
  // Field 5 is the mount point, with spaces and backslashes octal-escaped.
  const escaped = real.replace(/[\\ \t\n]/g, (c) => `\\${c.charCodeAt(0).toString(8).padStart(3, '0')}`)
  return info.split('\n').some((line) => line.split(' ')[4] === escaped)
}

/**
 * Whether the job filled its quota: the file system at `dir` holds at least `quotaBytes`. (Free
 * space is no test: ext4 keeps a few clusters back, so ENOSPC comes while statfs still shows some.)
 */
export async function quotaReached(dir: string, quotaBytes: number): Promise<boolean> {
  try {
    const s = await fs.statfs(dir)
    return (s.blocks - s.bfree) * s.bsize >= quotaBytes
  } catch {
    return false
  }
}

function errorText(err: unknown): string {
  const e = err as { stderr?: string; message?: string }
  const stderr = typeof e.stderr === 'string' ? e.stderr.trim() : ''
  return stderr !== '' ? stderr : (e.message ?? String(err))
}
