/**
 * `dms version` (with the protocol version) and `dms completion bash|zsh` (issue 20), through the
 * built CLI; the completion script is sourced in a real bash and asked as the shell would.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { promisify } from 'node:util'
import { ACTOR_PROTOCOL } from '../../../dms/network/transport.js'

const exec = promisify(execFile)

describe('dms version and dms completion (issue 20)', function () {
  this.timeout(30_000)

  it('dms version --json gives the package version and the protocol it speaks', async () => {
    const { stdout } = await exec(process.execPath, ['bin/dms.js', 'version', '--json'])
    const v = JSON.parse(stdout) as { version: string; protocol: string }
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }
    assert.equal(v.version, pkg.version)
    assert.equal(v.protocol, ACTOR_PROTOCOL)
  })

  it('the bash completion completes commands, subcommands and options from the command tree', async () => {
    const script = `
      source <(${process.execPath} bin/dms.js completion bash)
      t() { COMP_WORDS=("$@"); COMP_CWORD=$((\${#COMP_WORDS[@]} - 1)); _dms; echo "\${COMPREPLY[*]}"; }
      t dms jo; t dms job ""; t dms --json job run --ima; t dms job list -o y; t dms bl`
    const { stdout } = await exec('bash', ['-c', script])
    const [top, job, opt, format, blob] = stdout.split('\n')
    assert.equal(top, 'job')
    const subcommands = job.split(' ')
    for (const c of ['run', 'list', 'status', 'logs', 'outputs', 'cancel'])
      assert.ok(subcommands.includes(c), `${c} in ${job}`)
    assert.equal(opt, '--image')
    assert.equal(format, 'yaml', 'the values of -o')
    assert.equal(blob, 'blob')
    const zsh = await exec(process.execPath, ['bin/dms.js', 'completion', 'zsh'])
    assert.match(zsh.stdout, /^autoload -U \+X bashcompinit && bashcompinit\n/)
    await assert.rejects(exec(process.execPath, ['bin/dms.js', 'completion', 'fish']), /bash or zsh/)
  })
})
