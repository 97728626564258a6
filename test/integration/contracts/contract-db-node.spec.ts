import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ContractDbNode } from '../../../dms/contract-db/node.js'
import { TEST_PASSPHRASE } from '../../helpers/network.js'

describe('ContractDbNode start (shared with DmsNode: dms/peer-base.ts)', function () {
  this.timeout(20_000)
  let dir: string
  let first: ContractDbNode | undefined

  beforeEach(async () => (dir = await mkdtemp(join(tmpdir(), 'dms-cdb-node-'))))
  afterEach(async () => {
    await first?.stop()
    await rm(dir, { recursive: true, force: true })
  })

  it('refuses a data dir in use before asking for the passphrase, and leaves the running one alone', async () => {
    first = new ContractDbNode(
      { dataDir: dir, oneHost: true, socket: false },
      { passphrase: TEST_PASSPHRASE },
    )
    await first.start()
    let asked = false
    const second = new ContractDbNode(
      { dataDir: dir, oneHost: true, socket: false },
      { passphrase: () => ((asked = true), Promise.resolve('test passphrase')) },
    )
    await assert.rejects(second.start(), { name: 'DataDirInUseError' })
    assert.equal(asked, false, 'no passphrase is asked for a data dir another process holds')
    assert.ok(first.peerId.startsWith('12D3KooW'), 'the running service is untouched')
  })
})
