/**
 * A newcomer's path (issue 20), outside the repo: the package as `npm pack` makes it is installed
 * with `npm i -g` (into a temp prefix, from the npm cache), and the installed `dms` runs
 * `dms --help`, `dms devnet` and the job the devnet suggests — exactly the command it prints
 * (README, "Install"). The tarball must hold the built CLI and none of the repo's tests or
 * configs; the suggested job must find a bid with the CLI's defaults.
 */
import assert from 'node:assert/strict'
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { createInterface } from 'node:readline'
import { promisify } from 'node:util'

const exec = promisify(execFile)
const REPO = resolve(import.meta.dirname, '../..')

describe('the packed dms installed with npm i -g, outside the repo', function () {
  this.timeout(300_000)
  let dir: string
  let env: NodeJS.ProcessEnv
  let devnet: ChildProcess | undefined

  before(async function () {
    assert.ok(existsSync(join(REPO, 'dist/cli/main.js')), 'the CLI is not built: run `npm run build`')
    dir = await mkdtemp(join(tmpdir(), 'dms-install-'))
    // The suite has just built dist/: pack it as is (prepack would rebuild it).
    const packed = await exec('npm', ['pack', '--ignore-scripts', '--pack-destination', dir, '--json'], {
      cwd: REPO,
    })
    const [{ filename }] = JSON.parse(packed.stdout) as Array<{ filename: string }>
    await exec(
      'npm',
      [
        'i',
        '-g',
        '--prefix',
        join(dir, 'prefix'),
        join(dir, filename),
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
      ],
      { cwd: dir, timeout: 240_000 },
    )
    env = {
      ...process.env,
      PATH: `${join(dir, 'prefix', 'bin')}:${process.env.PATH ?? ''}`,
      DMS_SOCKET: '',
      DMS_DATA_DIR: join(dir, 'home'),
    }
  })

  after(async () => {
    if (devnet !== undefined && devnet.exitCode === null) {
      const exited = new Promise((r) => devnet!.once('exit', r))
      devnet.kill('SIGINT')
      await exited
    }
    if (dir !== undefined) await rm(dir, { recursive: true, force: true })
  })

  it('holds the built CLI and no tests, CI files or configs', async () => {
    const { stdout } = await exec('npm', ['pack', '--ignore-scripts', '--dry-run', '--json'], { cwd: REPO })
    const files = (JSON.parse(stdout) as Array<{ files: Array<{ path: string }> }>)[0].files.map(
      (f) => f.path,
    )
    assert.ok(files.includes('dist/cli/main.js'), 'the bundle bin/dms.js runs is packed')
    assert.ok(!files.some((f) => f.startsWith('dist/dms/')), 'not the unbundled build, which nothing runs')
    assert.ok(files.includes('bin/dms.js'))
    for (const f of ['app.js', 'app.css', 'index.html'])
      assert.ok(files.includes(`dist/dashboard/${f}`), `the dashboard's ${f} is packed`)
    const stray = files.filter((f) =>
      /^(test|scripts|dashboard|\.ci|node_modules)\/|^(tsconfig|eslint|\.mocharc|\.prettier)/.test(f),
    )
    assert.deepEqual(stray, [])
  })

  it('runs dms --help, a devnet, and the job the devnet suggests', async () => {
    const help = await exec('dms', ['--help'], { cwd: dir, env })
    assert.match(help.stdout, /Usage: dms/)
    devnet = spawn('dms', ['devnet', '--providers', '1', '--dir', join(dir, 'devnet')], {
      cwd: dir,
      env,
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    const lines = createInterface({ input: devnet.stdout! })
    const suggested = await new Promise<string>((resolve, reject) => {
      devnet!.once('exit', (code) => reject(new Error(`dms devnet exited (${code}) before it was ready`)))
      let next = false
      lines.on('line', (l) => {
        if (next) resolve(l.trim())
        next = l.startsWith('ready. Try:')
      })
    })
    const [cmd, ...args] = suggested.split(/\s+/)
    assert.equal(cmd, 'dms')
    assert.ok(args.includes('--wait'), suggested)
    assert.deepEqual(args.slice(-3), ['--', 'echo', 'hi'])
    const job = await exec(cmd, args, { cwd: dir, env, timeout: 120_000 })
    assert.equal(job.stdout, 'hi\n', 'stdout carries only the job’s output')
    assert.match(job.stderr, /completed/)

    // The installed package serves the dashboard from its own files: sign in, page, script.
    const socket = args[args.indexOf('--socket') + 1]
    const link = await exec(cmd, ['dashboard', '--json', '--socket', socket], { cwd: dir, env })
    const url = new URL((JSON.parse(link.stdout) as { url: string }).url)
    const signIn = await fetch(url, { redirect: 'manual' })
    assert.equal(signIn.status, 303)
    const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0]
    const page = await fetch(new URL('/dashboard/', url), { headers: { cookie } })
    assert.equal(page.status, 200)
    assert.match(await page.text(), /\/dashboard\/assets\/app\.js/)
    const script = await fetch(new URL('/dashboard/assets/app.js', url))
    assert.equal(script.status, 200)
    assert.ok((await script.text()).length > 1000)
  })
})
