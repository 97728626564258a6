/**
 * A real podman serving its Docker-compatible API for a test (specs/executor.md, "Docker-API
 * engines"): Debian's podman (scripts/podman-bootstrap.sh installs it under DMS_SETUP_TESTS=1) runs
 * `podman system service` on a unix socket in a temp folder, over its own storage
 * (`PODMAN_ROOT`), so no other podman user's containers or images are touched, with the test
 * image imported into it (scripts/build-test-image.sh with DMS_IMAGE_ENGINE). Where podman is
 * missing the caller skips, except under CI=true, where a missing podman is a failure.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)
const SCRIPTS = join(import.meta.dirname, '../../scripts')

/** Where the tests' podman keeps its images and containers (its `--root`; `--runroot` beside). */
export const PODMAN_ROOT = process.env.DMS_PODMAN_ROOT ?? '/var/lib/dms-podman'

/**
 * podman's global options for the tests' own store. cgroupfs and file events: no systemd is
 * assumed (this machine runs none, and a container has none).
 */
export const PODMAN_ARGS = [
  '--root',
  join(PODMAN_ROOT, 'storage'),
  '--runroot',
  '/run/dms-podman',
  '--cgroup-manager',
  'cgroupfs',
  '--events-backend',
  'file',
]

export interface TestPodman {
  /** The Docker-compatible API's socket (for `provider.docker.socketPath`). */
  socketPath: string
  stop(): Promise<void>
}

/** The podman command, or why there is none. */
export function podmanPath(): string | undefined {
  return (process.env.PATH ?? '').split(':').find((d) => d !== '' && existsSync(join(d, 'podman')))
}

/** Why podman cannot be tested here; a failure under CI=true (the bootstrap should have installed it). */
export function podmanMissing(): string | undefined {
  if (podmanPath() !== undefined) return undefined
  const why = 'podman is not installed (scripts/podman-bootstrap.sh; Debian: apt-get install podman)'
  if (process.env.CI === 'true') throw new Error(`${why}: under CI=true the podman tests must run`)
  return why
}

function ping(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request({ socketPath, path: '/_ping', timeout: 2000 }, (res) => {
      res.resume()
      resolve(res.statusCode === 200)
    })
    req.on('error', () => resolve(false))
    req.on('timeout', () => req.destroy())
    req.end()
  })
}

/** Starts the service and imports the test image into its store (once: the store is kept). */
export async function startPodman(image = process.env.DMS_TEST_IMAGE ?? 'dms-test:1'): Promise<TestPodman> {
  await run('bash', [join(SCRIPTS, 'build-test-image.sh')], {
    env: { ...process.env, DMS_TEST_IMAGE: image, DMS_IMAGE_ENGINE: ['podman', ...PODMAN_ARGS].join(' ') },
    timeout: 120_000,
  })
  const dir = mkdtempSync(join(tmpdir(), 'dms-podman-'))
  const socketPath = join(dir, 'engine.sock')
  const log: string[] = []
  const child: ChildProcess = spawn(
    'podman',
    [...PODMAN_ARGS, 'system', 'service', '--time=0', `unix://${socketPath}`],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  )
  child.stderr?.on('data', (d: Buffer) => log.push(d.toString()))
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM')
      await exited
    }
    rmSync(dir, { recursive: true, force: true })
  }
  // The service answers once its socket is bound: polled, as it announces nothing.
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) break
    if (await ping(socketPath)) return { socketPath, stop }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  await stop()
  throw new Error(`podman system service did not answer on ${socketPath}: ${log.join('').slice(-2000)}`)
}
