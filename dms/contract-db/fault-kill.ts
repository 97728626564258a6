/**
 * FAULT INJECTION, for the chaos run only (specs/chaos.md, "Faults"): when the environment
 * variable `DMS_FAULT_CDB_KILL_AFTER_LOCK` (read by the process entry: dms/test-hooks.ts) is `1`, the contract-db process SIGKILLs itself right
 * after it stored a new contract with its escrow locked and before it answers the verify, so the
 * requester's answer is lost between the lock and the reply. Installed when the service is built;
 * no config field or flag sets it, and unset (every production setup) it does nothing.
 */
export const FAULT_CDB_KILL_ENV = 'DMS_FAULT_CDB_KILL_AFTER_LOCK'

/** What runs after a lock is stored, before the verify is answered: nothing unless `v` is `1`. */
export function afterLockFault(
  v: string | undefined,
  kill: () => void = () => process.kill(process.pid, 'SIGKILL'),
): () => void {
  if (v === undefined || v === '' || v === '0') return () => undefined
  if (v !== '1') throw new Error(`${FAULT_CDB_KILL_ENV}=${v}: only 1 (or unset) is allowed`)
  return kill
}
