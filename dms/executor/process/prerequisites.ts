/**
 * What the process engine needs of its host (specs/executor.md, "The process engine"), checked
 * before it says it is available: root, the util-linux tools, and a cgroup hierarchy with the
 * cpu, memory and pids controllers. What is missing is said plainly, with the package that
 * brings it, for the operator (never for a peer).
 */
import { promises as fs, constants } from 'node:fs'
import { delimiter, join } from 'node:path'
import { detectCgroups, type CgroupVersion } from './cgroup.js'

/** The programs the scripts run, and the Debian/Ubuntu package of each. */
export const TOOLS: ReadonlyArray<readonly [string, string]> = [
  ['sh', 'dash'],
  ['unshare', 'util-linux'],
  ['setpriv', 'util-linux'],
  ['mount', 'mount'],
  ['umount', 'mount'],
  ['pivot_root', 'util-linux'],
  ['mkfifo', 'coreutils'],
  ['dd', 'coreutils'],
  ['cat', 'coreutils'],
  ['env', 'coreutils'],
]

/**
 * Where the tools are looked for, and the runner's PATH: the system's folders, not the
 * provider's environment.
 */
export const SYSTEM_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'

export type Prerequisites = { ok: true; cgroup: CgroupVersion } | { ok: false; why: string }

/** Whether this host can run the engine; `why` lists everything missing at once. */
export async function checkPrerequisites(
  opts: { path?: string; cgroupRoot?: string; uid?: number } = {},
): Promise<Prerequisites> {
  const missing: string[] = []
  const uid = opts.uid ?? process.getuid?.()
  if (uid !== 0) missing.push('root (the process engine makes namespaces and cgroups: run dms as root)')
  const dirs = (opts.path ?? SYSTEM_PATH).split(delimiter)
  for (const [tool, pkg] of TOOLS) {
    if (!(await onPath(tool, dirs))) missing.push(`${tool} (apt-get install ${pkg})`)
  }
  const cg = await detectCgroups(opts.cgroupRoot)
  if ('missing' in cg) missing.push(cg.missing)
  if (missing.length > 0 || 'missing' in cg) return { ok: false, why: `missing: ${missing.join('; ')}` }
  return { ok: true, cgroup: cg.version }
}

async function onPath(tool: string, dirs: string[]): Promise<boolean> {
  for (const d of dirs) {
    if (d === '') continue
    try {
      await fs.access(join(d, tool), constants.X_OK)
      return true
    } catch {
      // Not in this folder.
    }
  }
  return false
}
