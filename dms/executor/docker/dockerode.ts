/**
 * dockerode without the two parts of it DMS never uses, which it would otherwise load with itself:
 *
 * - docker-modem's ssh transport (`lib/ssh.js`, the ssh2 package, which compiles a WebAssembly
 *   poly1305 when loaded): for `DOCKER_HOST=ssh://...`, which the guarded modem refuses anyway
 *   (guarded-modem.ts).
 * - dockerode's BuildKit session (`lib/session.js`, @grpc/grpc-js, @grpc/proto-loader and
 *   protobufjs): for `buildImage` with `version: "2"`; DMS never builds images.
 *
 * Each is put in Node's module cache, before dockerode is loaded, as a function that fails with
 * a clear error. Together they were about 16 MB of the provider's idle RSS and 180 of the files
 * it loaded (specs/benchmarks.md, "Idle memory"). test/unit/executor/dockerode-slim.spec.ts holds
 * it to that.
 */
import { createRequire, Module } from 'node:module'
import { dirname, join } from 'node:path'
import type DockerodeClass from 'dockerode'

const load = createRequire(import.meta.url)
const dockerodeMain = load.resolve('dockerode')
const modemMain = createRequire(dockerodeMain).resolve('docker-modem')

/** The files replaced, and why a call to them fails. */
export const LEFT_OUT: ReadonlyArray<{ file: string; fails: string }> = [
  {
    file: join(dirname(modemMain), 'ssh.js'),
    fails: 'docker over ssh:// is not supported: give provider.docker.socketPath, or a tcp:// address',
  },
  {
    file: join(dirname(dockerodeMain), 'session.js'),
    fails: 'BuildKit sessions (image builds) are not supported',
  },
]

/** Thrown by a part of dockerode left out. */
export class DockerodePartLeftOut extends Error {
  override name = 'DockerodePartLeftOut'
  readonly code = 'DOCKER_PART_LEFT_OUT'
}

for (const { file, fails } of LEFT_OUT)
  if (load.cache[file] === undefined) {
    const m = new Module(file)
    m.filename = file
    m.loaded = true
    // ssh.js is called as ssh(opts) and session.js as withSession(docker, auth, done): both fail.
    m.exports = (...args: unknown[]) => {
      const err = new DockerodePartLeftOut(fails)
      const done = args[2]
      if (typeof done === 'function') return (done as (e: Error) => void)(err)
      throw err
    }
    load.cache[file] = m
  }

/** dockerode's class, loaded after the stand-ins above (its types: `import type Docker from 'dockerode'`). */
export const Dockerode = load('dockerode') as typeof DockerodeClass
