/**
 * dockerode as the executor loads it (dms/executor/docker/dockerode.ts): without docker-modem's
 * ssh transport (ssh2) and dockerode's BuildKit session (@grpc/grpc-js), and each of the two
 * fails with a clear error when called. Checked in a fresh process, since any other test that
 * loads dockerode itself would already have the real files in this process's module cache.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'

const exec = promisify(execFile)

const SCRIPT = `
import { createRequire } from 'node:module'
const { Dockerode } = await import('./dms/executor/docker/dockerode.ts')
const cached = Object.keys(createRequire(import.meta.url).cache)
const failure = (p) => p.then(() => 'no error', (e) => e.code + ': ' + e.message)
const overSsh = new Dockerode({ protocol: 'ssh', host: '127.0.0.1', port: 1 })
const docker = new Dockerode({ socketPath: '/nonexistent/docker.sock' })
console.log(JSON.stringify({
  dockerode: cached.some((f) => f.includes('/node_modules/dockerode/')),
  ssh2: cached.filter((f) => f.includes('/node_modules/ssh2/')).length,
  grpc: cached.filter((f) => f.includes('/node_modules/@grpc/')).length,
  ssh: await failure(overSsh.ping()),
  build: await failure(docker.buildImage({ context: '.', src: [] }, { version: '2' })),
}))
`

describe('executor/docker dockerode without ssh2 and grpc', function () {
  this.timeout(30_000)

  it('loads dockerode without ssh2 or @grpc, and either part fails clearly when called', async () => {
    const { stdout } = await exec(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', SCRIPT])
    const r = JSON.parse(stdout) as Record<string, unknown>
    assert.equal(r.dockerode, true)
    assert.equal(r.ssh2, 0)
    assert.equal(r.grpc, 0)
    assert.match(String(r.ssh), /^DOCKER_PART_LEFT_OUT: docker over ssh:\/\/ is not supported/)
    assert.match(String(r.build), /^DOCKER_PART_LEFT_OUT: BuildKit sessions/)
  })
})
