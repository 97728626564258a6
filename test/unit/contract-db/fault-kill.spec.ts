/**
 * The chaos run's contract-db fault point (fault-kill.ts): unset (or 0) it does nothing after a
 * lock; `1` kills; anything else is refused at start.
 */
import assert from 'node:assert/strict'
import { afterLockFault, FAULT_CDB_KILL_ENV } from '../../../dms/contract-db/fault-kill.js'
import { testHooksFromEnv } from '../../../dms/test-hooks.js'

/** The hook as `dms contract-db run` reads it from its environment. */
const fromEnv = (env: Record<string, string | undefined>) => testHooksFromEnv(env).cdbKillAfterLock

describe('contract-db/fault-kill', () => {
  it('unset or 0: nothing happens after a lock', () => {
    let kills = 0
    for (const env of [{}, { [FAULT_CDB_KILL_ENV]: '' }, { [FAULT_CDB_KILL_ENV]: '0' }])
      afterLockFault(fromEnv(env), () => kills++)()
    assert.equal(kills, 0)
  })

  it('1: the process is killed after the lock', () => {
    let kills = 0
    afterLockFault(fromEnv({ [FAULT_CDB_KILL_ENV]: '1' }), () => kills++)()
    assert.equal(kills, 1)
  })

  it('any other value is refused, naming the variable', () => {
    assert.throws(
      () => afterLockFault(fromEnv({ [FAULT_CDB_KILL_ENV]: 'yes' })),
      new RegExp(FAULT_CDB_KILL_ENV),
    )
  })
})
