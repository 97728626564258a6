/**
 * A command that finds no running node leaves no state behind (issue 35): `dms earnings` with no
 * node created `~/.dms/db`. The built CLI, run with a temp HOME and no DMS_* variables.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

describe('commands without a node create nothing (issue 35)', function () {
  this.timeout(60_000)
  let home: string

  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'dms-home-'))
  })
  afterEach(async () => {
    await rm(home, { recursive: true, force: true })
  })

  function dms(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('DMS_')))
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        ['bin/dms.js', ...args],
        { env: { ...env, HOME: home } },
        (err, stdout, stderr) =>
          resolve({ code: err === null ? 0 : Number((err as { code?: number }).code), stdout, stderr }),
      )
    })
  }

  for (const args of [['earnings'], ['earnings', '--json'], ['resources'], ['offboard']])
    it(`dms ${args.join(' ')} says no node has used ~/.dms, and creates nothing there`, async () => {
      const r = await dms(...args)
      assert.equal(r.code, 1, r.stderr)
      assert.equal(r.stdout, '')
      assert.match(
        r.stderr,
        /^dms: no node is running on this socket and no node has used .*\.dms \(no db there\)/,
      )
      assert.equal(existsSync(join(home, '.dms')), false, 'created ~/.dms')
      assert.deepEqual(await readdir(home), [])
    })

  it('--data-dir that does not exist stays absent', async () => {
    const dir = join(home, 'elsewhere')
    const r = await dms('earnings', '--data-dir', dir)
    assert.equal(r.code, 1)
    assert.equal(existsSync(dir), false)
  })
})
