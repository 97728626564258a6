/**
 * Usage errors through the built CLI (issue 29, item 9c): an unknown flag or command is one line on
 * stderr naming it, with where the help is, and exit status 2; never the whole usage.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'

function dms(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['bin/dms.js', ...args], (err, stdout, stderr) =>
      resolve({ code: err === null ? 0 : Number((err as { code?: number }).code), stdout, stderr }),
    )
  })
}

describe('dms usage errors (issue 29)', function () {
  this.timeout(30_000)

  it('an unknown flag prints one line naming it and the command help, exit 2', async () => {
    const r = await dms('job', 'list', '--bogus')
    assert.equal(r.code, 2)
    assert.equal(r.stdout, '')
    assert.equal(r.stderr, "dms: unknown option '--bogus' (see dms job list --help)\n")
  })

  it('an unknown command and a missing argument are one line too', async () => {
    const cmd = await dms('jbo')
    assert.equal(cmd.code, 2)
    assert.equal(cmd.stderr.split('\n').length, 2, cmd.stderr)
    assert.match(cmd.stderr, /^dms: unknown command 'jbo'.* \(see dms --help\)\n$/)
    const arg = await dms('job', 'status')
    assert.equal(arg.code, 2)
    assert.match(arg.stderr, /^dms: missing required argument 'id' \(see dms job status --help\)\n$/)
  })

  it('help still prints the usage and exits 0', async () => {
    const r = await dms('job', 'list', '--help')
    assert.equal(r.code, 0)
    assert.match(r.stdout, /^Usage: dms job list/)
  })
})
