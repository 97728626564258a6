/**
 * What a newcomer hits when a node or a contract-db cannot start (issue 20), through the built CLI
 * as separate processes: a second process on the same socket is refused and the first keeps
 * answering (it used to delete the live socket), a port in use or an address not on this machine
 * names the field and the address and exits 1 (it was "unexpected error", exit 70), and a
 * contract-db config with a misspelt field is refused (it silently used a default data dir).
 */
import assert from 'node:assert/strict'
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { request } from 'node:http'
import { createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { promisify } from 'node:util'

const exec = promisify(execFile)
const ENV = { ...process.env, DMS_PASSPHRASE: 'test passphrase', DMS_LOG_LEVEL: 'warn' }

const dms = (...args: string[]) => dmsWith({}, ...args)

async function dmsWith(
  env: Record<string, string>,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, ['bin/dms.js', ...args], {
      timeout: 60_000,
      env: { ...ENV, ...env },
    })
    return { code: 0, stdout, stderr }
  } catch (err) {
    const e = err as { code?: number; stdout: string; stderr: string }
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout, stderr: e.stderr }
  }
}

/** Starts a long-running `dms ...` and resolves once it prints its ready line. */
function started(args: string[]): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['bin/dms.js', ...args], {
    env: ENV,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let err = ''
  child.stderr.on('data', (c: Buffer) => (err += c.toString()))
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`dms ${args[0]} exited ${code}: ${err}`)))
    createInterface({ input: child.stdout }).on('line', (l) => {
      if (l.includes('"ready"')) resolve(child)
    })
  })
}

const stop = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null) return resolve()
    child.once('exit', () => resolve())
    child.kill('SIGTERM')
  })

const health = (socketPath: string, path = '/v1/health') =>
  new Promise<number>((resolve, reject) => {
    const req = request({ socketPath, path }, (res) => {
      res.resume()
      resolve(res.statusCode ?? 0)
    })
    req.on('error', reject)
    req.end()
  })

describe('dms start refusals (issue 20)', function () {
  this.timeout(90_000)
  let dir: string
  const children: ChildProcess[] = []

  before(async () => {
    assert.ok(existsSync('dist/dms/cli/main.js'), 'the CLI is not built: run `npm run build`')
    dir = await mkdtemp(join(tmpdir(), 'dms-start-'))
  })
  after(async () => {
    await Promise.all(children.map(stop))
    await rm(dir, { recursive: true, force: true })
  })

  it('a second node on the same socket is refused with the first one’s pid, and the first keeps answering', async () => {
    const socket = join(dir, 'shared.sock')
    for (const n of ['a', 'b'])
      await writeFile(join(dir, `${n}.json`), JSON.stringify({ dataDir: join(dir, n), api: { socket } }))
    const first = await started(['run', '-c', join(dir, 'a.json')])
    children.push(first)
    const second = await dms('run', '-c', join(dir, 'b.json'))
    assert.equal(second.code, 1, second.stderr)
    assert.match(second.stderr, new RegExp(`socket ${socket} in use by a running dms \\(pid ${first.pid}\\)`))
    assert.equal(await health(socket), 200, 'the first node still answers on its socket')
  })

  it('a contract-db on the operator socket of a running one is refused, and the first keeps answering', async () => {
    const socket = join(dir, 'cdb.sock')
    for (const n of ['c1', 'c2'])
      await writeFile(join(dir, `${n}.json`), JSON.stringify({ dataDir: join(dir, n), socket }))
    const first = await started(['contract-db', 'run', '-c', join(dir, 'c1.json')])
    children.push(first)
    const second = await dms('contract-db', 'run', '-c', join(dir, 'c2.json'))
    assert.equal(second.code, 1, second.stderr)
    assert.match(second.stderr, new RegExp(`in use by a running dms \\(pid ${first.pid}\\)`))
    assert.equal(await health(socket), 200, 'the first contract-db still answers on its socket')
  })

  it('a listen port in use and an address not on this machine name the field and the address, exit 1', async () => {
    const busy: Server = createServer()
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r))
    const port = (busy.address() as { port: number }).port
    try {
      const env = { ...ENV, DMS_LISTEN: `/ip4/127.0.0.1/tcp/${port}` }
      const r = await dmsWith(env, 'run', '--data-dir', join(dir, 'p2'))
      assert.equal(r.code, 1, r.stderr)
      assert.match(r.stderr, new RegExp(`listen.*DMS_LISTEN.*/ip4/127.0.0.1/tcp/${port}: address in use`))
      const api = await dmsWith({ DMS_API_PORT: String(port) }, 'run', '--data-dir', join(dir, 'p3'))
      assert.equal(api.code, 1, api.stderr)
      assert.match(api.stderr, new RegExp(`DMS_API_PORT.*127.0.0.1:${port}: address in use`))
    } finally {
      busy.close()
    }
    const far = await dmsWith({ DMS_LISTEN: '/ip4/192.0.2.1/tcp/0' }, 'run', '--data-dir', join(dir, 'p4'))
    assert.equal(far.code, 1, far.stderr)
    assert.match(far.stderr, /\/ip4\/192\.0\.2\.1\/tcp\/0: address not available/)
  })

  it('metrics beyond loopback without "public", or on a port in use, are refused, saying how to fix it, exit 1', async () => {
    await writeFile(
      join(dir, 'm1.json'),
      JSON.stringify({ dataDir: join(dir, 'm1'), metrics: { host: '0.0.0.0', port: 0 } }),
    )
    const wide = await dms('run', '-c', join(dir, 'm1.json'))
    assert.equal(wide.code, 1, wide.stderr)
    assert.match(wide.stderr, /metrics\.host 0\.0\.0\.0 is reachable from other machines: set "public": true/)
    const busy: Server = createServer()
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r))
    const port = (busy.address() as { port: number }).port
    try {
      await writeFile(join(dir, 'm2.json'), JSON.stringify({ dataDir: join(dir, 'm2'), metrics: { port } }))
      const cdb = await dms('contract-db', 'run', '-c', join(dir, 'm2.json'))
      assert.equal(cdb.code, 1, cdb.stderr)
      assert.match(cdb.stderr, new RegExp(`metrics: cannot listen on 127.0.0.1:${port}: address in use`))
    } finally {
      busy.close()
    }
  })

  it('a contract-db config with a misspelt field is refused, naming it', async () => {
    await writeFile(join(dir, 'typo.json'), JSON.stringify({ dataDr: join(dir, 'cdb-typo') }))
    const r = await dms('contract-db', 'run', '-c', join(dir, 'typo.json'))
    assert.equal(r.code, 1, r.stderr)
    assert.match(r.stderr, /"dataDr": unknown field/)
    assert.equal(existsSync(join(dir, 'cdb-typo')), false)
  })
})
