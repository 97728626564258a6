/**
 * The chaos run's contract-db fault point (fault-kill.ts): unset (or 0) it does nothing after a
 * lock; `1` kills; anything else is refused at start.
 */
import assert from 'node:assert/strict'
import { afterLockFault, FAULT_CDB_KILL_ENV } from '../../../dms/contract-db/fault-kill.js'

describe('contract-db/fault-kill', () => {
  it('unset or 0: nothing happens after a lock', () => {
    let kills = 0
    for (const env of [{}, { [FAULT_CDB_KILL_ENV]: '' }, { [FAULT_CDB_KILL_ENV]: '0' }])
      afterLockFault(env, () => kills++)()
    assert.equal(kills, 0)
  })

  it('1: the process is killed after the lock', () => {
    let kills = 0
    afterLockFault({ [FAULT_CDB_KILL_ENV]: '1' }, () => kills++)()
    assert.equal(kills, 1)
  })

  it('any other value is refused, naming the variable', () => {
    assert.throws(() => afterLockFault({ [FAULT_CDB_KILL_ENV]: 'yes' }), new RegExp(FAULT_CDB_KILL_ENV))
  })
})
