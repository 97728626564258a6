/**
 * A contract-db whose config puts its books in PostgreSQL (specs/contract-db.md, "Storage
 * backends"; specs/config.md): two instances with one identity (the same key file) over one
 * database see the same books, `/v1/info` names the backend and the instance, and the database
 * password, given in a file, appears neither there nor in any log line.
 */
import assert from 'node:assert/strict'
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import pino from 'pino'
import { ApiClient } from '../../../dms/api/client.js'
import { ContractDbNode, type ContractDbConfig } from '../../../dms/contract-db/node.js'
import { newParty } from '../../helpers/contracts.js'
import { TEST_PASSPHRASE } from '../../helpers/network.js'
import { startPostgres, type TestPostgres } from '../../helpers/postgres.js'
import { freshDatabase } from '../../helpers/postgres-db.js'

describe('a contract-db with its books in PostgreSQL', function () {
  this.timeout(90_000)
  let cluster: TestPostgres | undefined
  let root: string
  const nodes: ContractDbNode[] = []

  before(async function () {
    cluster = await startPostgres()
    if (cluster === undefined) this.skip()
    root = await mkdtemp(join(tmpdir(), 'dms-cdb-pg-node-'))
  })
  after(async () => {
    for (const n of nodes.splice(0).reverse()) await n.stop()
    await cluster?.stop()
    if (root !== undefined) await rm(root, { recursive: true, force: true })
  })

  it('two instances, one identity and one database: the same books; backend and instance shown, the password never', async () => {
    const { url } = await freshDatabase(cluster!)
    // The password in a file; the URL in the config holds none.
    const u = new URL(url)
    const password = decodeURIComponent(u.password)
    u.password = ''
    const passwordFile = join(root, 'pgpass')
    await writeFile(passwordFile, `${password}\n`, { mode: 0o600 })
    const lines: string[] = []
    const log = pino(
      { level: 'debug' },
      new Writable({
        write(chunk: Buffer, _enc, done) {
          lines.push(chunk.toString())
          done()
        },
      }),
    )
    const config = (name: string): ContractDbConfig => ({
      dataDir: join(root, name),
      oneHost: true,
      instance: name,
      store: { backend: 'postgres', url: u.toString(), passwordFile },
    })
    const a = new ContractDbNode(config('cdb-a'), { passphrase: TEST_PASSPHRASE, log })
    await a.start()
    nodes.push(a)
    // Step A: the second instance holds the same sealed key.
    await mkdir(join(root, 'cdb-b'), { recursive: true, mode: 0o700 })
    await copyFile(join(root, 'cdb-a', 'node.key'), join(root, 'cdb-b', 'node.key'))
    const b = new ContractDbNode(config('cdb-b'), { passphrase: TEST_PASSPHRASE, log })
    await b.start()
    nodes.push(b)
    assert.equal(b.peerId, a.peerId)

    const peer = newParty().peer
    await new ApiClient(a.socketPath!).ok('POST', `/v1/contract-db/accounts/${peer}/credit`, { amount: 500 })
    const info = async (n: ContractDbNode) =>
      new ApiClient(n.socketPath!).ok<{ backend: string; instance: string }>('GET', '/v1/info')
    const [ia, ib] = await Promise.all([info(a), info(b)])
    assert.deepEqual(
      [ia.backend, ia.instance, ib.backend, ib.instance],
      ['postgres', 'cdb-a', 'postgres', 'cdb-b'],
    )
    assert.equal((await b.service.account(peer)).balance, 500)
    assert.deepEqual(await b.service.conservation().then((c) => [c.ok, c.credited]), [true, 500])

    assert.ok(
      lines.some((l) => l.includes('contract-db books in PostgreSQL')),
      'the start says where the books are',
    )
    for (const text of [...lines, JSON.stringify(ia), JSON.stringify(ib)])
      assert.ok(!text.includes(password), `the password leaked: ${text}`)
  })
})
