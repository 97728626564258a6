/**
 * The disk a job gets on /outputs (specs/resources.md, "Disk of a job"). Every run has a quota: the
 * disk the job asked for, or, when it asked for none, the provider's default quota, no larger than
 * the disk still free in its offer. The ledger holds this amount, so the provider never promises
 * more disk than it offers; the bid and the contract keep the job's own `resources` (the requester
 * checks that they match its request), and the default disk is not priced.
 */
import type { Resources } from '../resources/types.js'

const MiB = 1024 * 1024

/** The default quota of a job that gives no disk (`provider.defaultDiskBytes`). */
export const DEFAULT_DISK_BYTES = 256 * MiB

/** The smallest quota granted: below it a job without disk is declined ("not enough disk"). */
export const MIN_DISK_GRANT_BYTES = 8 * MiB

/**
 * `asked` with the disk this provider holds for it: unchanged when it asks for disk; otherwise
 * min(default, free disk), but at least MIN_DISK_GRANT_BYTES, so that a provider with less free
 * disk than that declines instead of running a job without a quota.
 */
export function grantedResources(
  asked: Resources,
  free: Resources,
  defaultDiskBytes = DEFAULT_DISK_BYTES,
): Resources {
  if (asked.diskBytes > 0) return asked
  return { ...asked, diskBytes: Math.max(MIN_DISK_GRANT_BYTES, Math.min(defaultDiskBytes, free.diskBytes)) }
}
