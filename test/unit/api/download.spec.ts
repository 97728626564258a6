/**
 * `downloadTo`, the CLI's download to `<out>.part` (`dms blob get --out`, `dms job outputs --out`):
 * another local user who planted a symlink at that name (in a shared folder such as /tmp) must not
 * get the download written through it into a file of the user running the CLI.
 */
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { downloadTo } from '../../../dms/api/client.js'

describe('api/client downloadTo', function () {
  let dir: string
  let server: Server
  let socket: string

  beforeEach(async function () {
    dir = await mkdtemp(join(tmpdir(), 'dms-download-'))
    socket = join(dir, 'api.sock')
    server = createServer((_req, res) => res.end('blob bytes'))
    await new Promise<void>((resolve) => server.listen(socket, resolve))
  })
  afterEach(async function () {
    await new Promise((resolve) => server.close(resolve))
    await rm(dir, { recursive: true, force: true })
  })

  it('writes a new file, hashed on the way', async function () {
    const got = await downloadTo(socket, '/v1/blobs/x', join(dir, 'out.part'))
    assert.deepEqual(got, { sha256: createHash('sha256').update('blob bytes').digest('hex'), size: 10 })
    assert.equal(await readFile(join(dir, 'out.part'), 'utf8'), 'blob bytes')
  })

  it('never writes through a file or symlink already at its name', async function () {
    const victim = join(dir, 'victim')
    await writeFile(victim, 'precious')
    const part = join(dir, 'out.part')
    await symlink(victim, part)
    await assert.rejects(downloadTo(socket, '/v1/blobs/x', part), { code: 'EEXIST' })
    assert.equal(await readFile(victim, 'utf8'), 'precious')
  })
})
