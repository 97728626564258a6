/**
 * FAULT INJECTION points for the restore tests and the chaos run, read from the environment in one
 * place: the process entry (`dms run`, `dms contract-db run`) builds them and passes them down
 * as a component; no part reads `process.env` for them. Unset (every production setup), none.
 * The variable names stay: the chaos run (scripts/chaos/) and the restore tests set them in the
 * environment of the process they spawn.
 */
import { FAULT_CDB_KILL_ENV } from './contract-db/fault-kill.js'
import { FAULT_KILL_ENV } from './orchestrator/fault-kill.js'

export interface TestHooks {
  /**
   * `DMS_FAULT_KILL_IN_STATE`: the requester SIGKILLs itself once a job it posted has entered and
   * stored this state (orchestrator/fault-kill.ts). @default none
   */
  killInState?: string
  /**
   * `DMS_FAULT_CDB_KILL_AFTER_LOCK`: `1` makes the contract-db SIGKILL itself between storing a
   * lock and answering its verify (contract-db/fault-kill.ts). @default none
   */
  cdbKillAfterLock?: string
}

/** The hooks `env` asks for (checked where each is installed: a bad value refuses to start). */
export function testHooksFromEnv(env: Record<string, string | undefined>): TestHooks {
  const hooks: TestHooks = {}
  const kill = env[FAULT_KILL_ENV]
  if (kill !== undefined && kill !== '') hooks.killInState = kill
  const cdb = env[FAULT_CDB_KILL_ENV]
  if (cdb !== undefined && cdb !== '') hooks.cdbKillAfterLock = cdb
  return hooks
}
