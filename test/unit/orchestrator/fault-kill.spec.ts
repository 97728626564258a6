/**
 * The restore tests' fault injection point (fault-kill.ts): unset it installs nothing; set, it
 * kills at the named state for jobs posted after it was installed only; an unknown state refuses.
 */
import assert from 'node:assert/strict'
import { installFaultKill } from '../../../dms/orchestrator/fault-kill.js'
import type { StoredJob } from '../../../dms/orchestrator/job-store.js'

function fakeStore() {
  const listeners: Array<(j: StoredJob) => void> = []
  return {
    listeners,
    onChange: (fn: (j: StoredJob) => void) => {
      listeners.push(fn)
      return () => undefined
    },
    emit: (state: string, createdAt: number) =>
      listeners.forEach((l) => l({ state, record: { createdAt } } as unknown as StoredJob)),
  }
}

describe('orchestrator/fault-kill (fault injection for the restore tests)', () => {
  it('installs nothing unless the variable is set', () => {
    const store = fakeStore()
    assert.equal(installFaultKill(store, undefined), undefined)
    assert.equal(installFaultKill(store, ''), undefined)
    assert.equal(store.listeners.length, 0)
  })

  it('kills at the named state, only for a job posted after it was installed', () => {
    const store = fakeStore()
    let kills = 0
    const state = installFaultKill(
      store,
      'running',
      () => kills++,
      () => 1000,
    )
    assert.equal(state, 'running')
    store.emit('invoking', 1000)
    store.emit('running', 999) // a job restored at start
    assert.equal(kills, 0)
    store.emit('running', 1000)
    assert.equal(kills, 1)
  })

  it('refuses a state it cannot kill at', () => {
    assert.throws(() => installFaultKill(fakeStore(), 'completed'), /not one of/)
  })
})
