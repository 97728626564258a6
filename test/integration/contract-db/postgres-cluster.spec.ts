/**
 * The throwaway PostgreSQL cluster the contract-db's PostgreSQL tests run on
 * (scripts/postgres-cluster.sh, test/helpers/postgres.ts): it serves on loopback with a password,
 * and stopping it leaves no server and no folder. Skips where no server programs are installed
 * (scripts/postgres-bootstrap.sh), except under CI=true, where that is an error.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { promisify } from 'node:util'
import { PostgresMissingError, startPostgres, type TestPostgres } from '../../helpers/postgres.js'

const run = promisify(execFile)
const psql = (url: string, sql: string) => run('psql', ['-w', url, '-Atc', sql], { timeout: 20_000 })

describe('a throwaway PostgreSQL cluster for tests', function () {
  this.timeout(60_000)
  let pg: TestPostgres | undefined

  afterEach(async () => {
    await pg?.stop()
    pg = undefined
  })

  it('serves on 127.0.0.1 with a password, and is gone once stopped', async function () {
    pg = await startPostgres()
    if (pg === undefined) this.skip()
    const url = new URL(pg.url)
    assert.equal(url.hostname, '127.0.0.1')
    const { stdout } = await psql(pg.url, "select current_setting('listen_addresses'), current_user")
    assert.equal(stdout.trim(), '127.0.0.1|dms')
    // No password, no connection: the cluster trusts nobody over TCP.
    await assert.rejects(psql(`postgres://dms@127.0.0.1:${url.port}/dms`, 'select 1'), /no password supplied/)
    const { dir } = pg
    await pg.stop()
    pg = undefined
    assert.equal(existsSync(dir), false)
    await assert.rejects(psql(url.toString(), 'select 1'))
  })

  it('under CI=true a missing server is an error, not a skip', async () => {
    const hasServer = () => false
    await assert.rejects(startPostgres({ env: { CI: 'true' }, hasServer }), PostgresMissingError)
    assert.equal(await startPostgres({ env: {}, hasServer }), undefined)
  })
})
