/**
 * `dms version` (with the protocol version) and `dms completion bash|zsh` (issue 20), through the
 * built CLI; the completion script is sourced in a real bash and asked as the shell would.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import Fastify from 'fastify'
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

  it('completes ids from the node (quietly nothing without one), file and folder paths, never running what a name holds', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dms-complete-'))
    const sock = join(dir, 'dms.sock')
    const app = Fastify()
    const pwned = join(dir, 'pwned')
    app.get('/v1/jobs', () => ({ jobs: [{ id: '3f2a1111-0000-4000-8000-000000000001' }] }))
    app.get('/v1/queues', () => ({
      queues: [
        { id: '9c003333-0000-4000-8000-000000000003', tag: 'nightly' },
        // A tag is the user's free text: a shell must never run it.
        { id: '9c004444-0000-4000-8000-000000000004', tag: `n$(touch ${pwned})` },
        { id: '9c005555-0000-4000-8000-000000000005', tag: 'n*' },
      ],
    }))
    app.get('/v1/workflows', () => ({
      workflows: [{ id: 'aa001111-0000-4000-8000-000000000001', name: 'etl' }],
    }))
    await app.listen({ path: sock })
    try {
      // The script runs the `dms` it completes for (its first word): here, this checkout's.
      const bin = join(dir, 'bin')
      await mkdir(bin)
      await writeFile(join(bin, 'dms'), `#!/bin/sh\nexec ${process.execPath} ${resolve('bin/dms.js')} "$@"\n`)
      await chmod(join(bin, 'dms'), 0o755)
      const work = join(dir, 'work')
      await mkdir(join(work, 'specs'), { recursive: true })
      await writeFile(join(work, 'spec.json'), '{}')
      const script = `
        cd ${work}
        source <(dms completion bash)
        t() { COMP_WORDS=("$@"); COMP_CWORD=$((\${#COMP_WORDS[@]} - 1)); _dms; echo "\${COMPREPLY[*]}"; }
        t dms job status ""; t dms job run --queue n; t dms workflow logs e
        t dms job run -f spec.; t dms blob put s; t dms job outputs x --out s; t dms job run --memory 6
        DMS_SOCKET=/nowhere/dms.sock t dms job cancel ""; t dms job status --socket /nowhere/dms.sock ""`
      const { stdout } = await exec('bash', ['-c', script], {
        env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, DMS_SOCKET: sock },
      })
      const [jobIds, queues, workflows, file, files, dirs, size, noNode, noNodeFlag] = stdout.split('\n')
      assert.equal(jobIds, '3f2a1111-0000-4000-8000-000000000001')
      assert.equal(queues, 'nightly', 'tags that a shell would expand are not offered')
      assert.equal(workflows, 'etl')
      assert.equal(file, 'spec.json')
      assert.deepEqual(files.split(' ').sort(), ['spec.json', 'specs'])
      assert.equal(dirs, 'specs', 'folders only for --out')
      assert.equal(size, '', 'a value to type: nothing offered')
      assert.equal(noNode, '', 'no node answers: nothing, quietly')
      assert.equal(noNodeFlag, '', 'the --socket typed on the line is the one asked')
      assert.equal(existsSync(pwned), false, 'a queue tag was run by the shell')
    } finally {
      await app.close()
      await rm(dir, { recursive: true, force: true })
    }
  })
})
