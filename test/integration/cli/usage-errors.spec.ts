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

  it('a typo is one line with a did-you-mean hint, also through `dms help` and -o (issue 35)', async () => {
    const cmd = await dms('jbo')
    assert.equal(cmd.stderr, "dms: unknown command 'jbo'; did you mean job? (see dms --help)\n")
    const sub = await dms('job', 'lsit')
    assert.equal(sub.stderr, "dms: unknown command 'lsit'; did you mean list? (see dms job --help)\n")
    const flag = await dms('job', 'run', '--imgae', 'x')
    assert.equal(
      flag.stderr,
      "dms: unknown option '--imgae'; did you mean --image? (see dms job run --help)\n",
    )
    const help = await dms('help', 'jbo')
    assert.equal(help.code, 2)
    assert.equal(help.stdout, '')
    assert.equal(help.stderr, "dms: unknown command 'jbo'; did you mean job? (see dms --help)\n")
    const deep = await dms('help', 'job', 'lsit')
    assert.equal(deep.code, 2)
    assert.equal(deep.stderr, "dms: unknown command 'lsit'; did you mean list? (see dms job --help)\n")
    const far = await dms('help', 'zzzzzz')
    assert.equal(far.stderr, "dms: unknown command 'zzzzzz' (see dms --help)\n")
    const format = await dms('version', '-o', 'jsno')
    assert.equal(format.code, 1)
    assert.match(format.stderr, /^dms: -o\/--output: "jsno" is not one of .*; did you mean json\?\n$/)
  })

  it("dms help <command> still prints that command's usage, exit 0", async () => {
    const r = await dms('help', 'job', 'list')
    assert.equal(r.code, 0)
    assert.match(r.stdout, /^Usage: dms job list/)
  })

  it('help still prints the usage and exits 0', async () => {
    const r = await dms('job', 'list', '--help')
    assert.equal(r.code, 0)
    assert.match(r.stdout, /^Usage: dms job list/)
  })
})
