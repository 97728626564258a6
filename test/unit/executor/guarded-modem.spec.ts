/**
 * The guarded engine connection against a stand-in engine (a mock: a real engine cannot be made to
 * redirect where a test wants): a redirect is an error of the call, never a request elsewhere.
 * docker-modem's own modem, on the same engine, shows what it prevents.
 */
import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import { createRequire } from 'node:module'
import { PassThrough } from 'node:stream'
import Docker from 'dockerode'
import { guardedModem } from '../../../dms/executor/docker/guarded-modem.js'
import { startFakeEngine, type FakeEngine } from '../../helpers/fake-engine.js'

describe('executor/docker guardedModem', () => {
  let engine: FakeEngine
  let trap: Server
  let trapped: string[]
  let onTrap: () => void = () => undefined

  before(async () => {
    trapped = []
    // Where a followed redirect lands: it answers like an engine would, so nothing crashes here.
    trap = createServer((req, res) => {
      trapped.push(req.url ?? '')
      onTrap()
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"Id":"from-the-trap"}')
    })
    await new Promise<void>((r) => trap.listen(0, '127.0.0.1', r))
    const port = (trap.address() as { port: number }).port
    engine = await startFakeEngine(() => ({
      status: 301,
      headers: { location: `//127.0.0.1:${port}/images/elsewhere/json` },
    }))
  })
  after(async () => {
    await engine?.stop()
    await new Promise((r) => trap?.close(r))
  })

  it('turns an engine redirect into an error of the call; nothing reaches the Location', async () => {
    const docker = new Docker({
      modem: guardedModem({ socketPath: engine.socketPath }),
    } as Docker.DockerOptions)
    await assert.rejects(docker.getImage('busybox:1').inspect(), { statusCode: 301 })
    assert.deepEqual(trapped, [])
    assert.equal((await docker.version()).Version, '20.10.24-fake', 'other calls still work')
  })

  it("(docker-modem's own modem follows the same redirect off the socket)", async () => {
    const Modem = createRequire(createRequire(import.meta.url).resolve('dockerode'))(
      'docker-modem',
    ) as new (o: { socketPath: string }) => unknown
    const docker = new Docker({ modem: new Modem({ socketPath: engine.socketPath }) } as Docker.DockerOptions)
    const reached = new Promise<void>((resolve) => (onTrap = resolve))
    await assert.rejects(docker.getImage('busybox:1').inspect(), { statusCode: 301 })
    await reached
    assert.deepEqual(trapped, ['/images/elsewhere/json'])
  })

  it('ends a pull whose progress is not JSON with an error instead of throwing in a listener', async () => {
    const modem = guardedModem({ socketPath: engine.socketPath })
    const stream = new PassThrough()
    const seen: unknown[] = []
    const done = new Promise<Error | null>((resolve) =>
      modem.followProgress(
        stream,
        (err) => resolve(err),
        (e) => seen.push(e),
      ),
    )
    stream.write('{"status":"Pulling fs layer","id":"a"}\n')
    stream.write('\n{"status":"Downloading"}\r\n<html>not json</html>\n')
    assert.match(String(await done), /progress line that is not JSON: "<html>not json<\/html>"/)
    assert.deepEqual(seen, [{ status: 'Pulling fs layer', id: 'a' }, { status: 'Downloading' }])
    const ok = new PassThrough()
    const finished = new Promise<Error | null>((resolve) => modem.followProgress(ok, (err) => resolve(err)))
    ok.end('{"status":"Done"}\n')
    assert.equal(await finished, null)
  })
})
