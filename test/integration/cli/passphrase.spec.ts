/**
 * The key passphrase as a newcomer meets it (issue 20), the built CLI in a real pseudo-terminal
 * (util-linux `script`): asked on /dev/tty even with stdin and stderr redirected, asked twice when
 * a key is created, an empty one refused with the reason, and `dms key change-passphrase`.
 */
import assert from 'node:assert/strict'
import { execFile, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

const exec = promisify(execFile)
const { DMS_PASSPHRASE: _unused, ...BASE_ENV } = process.env

/**
 * Runs `dms args` in a pseudo-terminal with stdin from /dev/null and stderr to `errFile`, typing
 * each answer when its prompt appears. Resolves with everything the terminal showed and the code.
 */
function inTerminal(
  args: string[],
  answers: Array<[RegExp, string]>,
  errFile = '/dev/null',
): Promise<{ code: number; screen: string }> {
  const cmd = `${process.execPath} bin/dms.js ${args.join(' ')} < /dev/null 2>${errFile}`
  const child = spawn('script', ['-qfec', cmd, '/dev/null'], {
    env: BASE_ENV,
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  let screen = ''
  const pending = [...answers]
  child.stdout.on('data', (d: Buffer) => {
    screen += d.toString()
    while (pending.length > 0 && pending[0][0].test(screen)) {
      const [prompt, answer] = pending.shift()!
      screen = screen.replace(prompt, `[${prompt.source}]`)
      child.stdin.write(`${answer}\r`)
    }
  })
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code: code ?? -1, screen })))
}

describe('the key passphrase on a terminal (issue 20)', function () {
  this.timeout(60_000)
  let dir: string

  before(async function () {
    assert.ok(existsSync('dist/dms/cli/main.js'), 'the CLI is not built: run `npm run build`')
    dir = await mkdtemp(join(tmpdir(), 'dms-pass-'))
  })
  after(async () => rm(dir, { recursive: true, force: true }))

  it('is asked twice on /dev/tty when the key is created, with stdin and stderr redirected', async () => {
    const r = await inTerminal(
      ['init', '--data-dir', join(dir, 'a')],
      [
        [/new key passphrase: /, 'correct horse'],
        [/new key passphrase again: /, 'correct horse'],
      ],
    )
    assert.equal(r.code, 0, r.screen)
    assert.match(r.screen, /created identity 12D3KooW/)
    assert.doesNotMatch(r.screen, /correct horse/, 'the passphrase is not echoed')
    // The key is sealed with it.
    const again = await exec(process.execPath, ['bin/dms.js', 'init', '--data-dir', join(dir, 'a')], {
      env: { ...BASE_ENV, DMS_PASSPHRASE: 'correct horse' },
    })
    assert.match(again.stdout, /existing identity/)
  })

  it('refuses an empty passphrase, and two that differ, saying why and creating nothing', async () => {
    const errFile = join(dir, 'stderr')
    const empty = await inTerminal(
      ['init', '--data-dir', join(dir, 'b')],
      [[/new key passphrase: /, '']],
      errFile,
    )
    assert.equal(empty.code, 1, empty.screen)
    assert.match(await readFile(errFile, 'utf8'), /empty passphrase would leave the key unprotected/)
    const differ = await inTerminal(
      ['init', '--data-dir', join(dir, 'b')],
      [
        [/new key passphrase: /, 'one'],
        [/new key passphrase again: /, 'two'],
      ],
      errFile,
    )
    assert.equal(differ.code, 1, differ.screen)
    assert.match(await readFile(errFile, 'utf8'), /the two passphrases differ/)
    assert.equal(existsSync(join(dir, 'b', 'node.key')), false)
  })

  it('dms key change-passphrase re-seals the same key with the new passphrase', async () => {
    const d = join(dir, 'c')
    const env = (v: Record<string, string>) => ({ env: { ...BASE_ENV, ...v } })
    const created = await exec(
      process.execPath,
      ['bin/dms.js', 'init', '--data-dir', d, '--json'],
      env({ DMS_PASSPHRASE: 'old' }),
    )
    const { peerId } = JSON.parse(created.stdout) as { peerId: string }
    await exec(
      process.execPath,
      ['bin/dms.js', 'key', 'change-passphrase', '--data-dir', d],
      env({ DMS_PASSPHRASE: 'old', DMS_NEW_PASSPHRASE: 'new' }),
    )
    const reread = await exec(
      process.execPath,
      ['bin/dms.js', 'init', '--data-dir', d, '--json'],
      env({ DMS_PASSPHRASE: 'new' }),
    )
    assert.equal((JSON.parse(reread.stdout) as { peerId: string }).peerId, peerId)
    await assert.rejects(
      exec(process.execPath, ['bin/dms.js', 'init', '--data-dir', d], env({ DMS_PASSPHRASE: 'old' })),
      (e: { code: number; stderr: string }) => e.code === 1 && /wrong passphrase/.test(e.stderr),
    )
  })
})
