import assert from 'node:assert/strict'
import { nextContractState, type ContractState } from '../../../dms/contract-db/contract-machine.js'

describe('contract-db/contract-machine', () => {
  it('goes proposed -> active -> settled | terminated', () => {
    assert.equal(nextContractState('proposed', 'VERIFY'), 'active')
    assert.equal(nextContractState('active', 'SETTLE'), 'settled')
    assert.equal(nextContractState('active', 'TERMINATE'), 'terminated')
  })

  it('refuses everything else: a closed contract never closes again', () => {
    const all: ContractState[] = ['proposed', 'active', 'settled', 'terminated']
    const allowed = new Set(['proposed:VERIFY', 'active:SETTLE', 'active:TERMINATE'])
    for (const from of all)
      for (const ev of ['VERIFY', 'SETTLE', 'TERMINATE'] as const)
        if (!allowed.has(`${from}:${ev}`))
          assert.equal(nextContractState(from, ev), undefined, `${from} ${ev}`)
  })
})
