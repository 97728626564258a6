/**
 * A throwaway PostgreSQL cluster for a test (scripts/postgres-cluster.sh): on 127.0.0.1, a free
 * port, a random password, in a temp folder removed by `stop`. Undefined when this machine has no
 * PostgreSQL server programs (scripts/postgres-bootstrap.sh installs them): the test skips, except
 * under `CI=true`, where a missing server is an error (CI never silently skips these tests).
 */
import { execFile } from 'node:child_process'
import { existsSync, readdirSync } from 'node:fs'
import { chmod, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)
const SCRIPT = join(import.meta.dirname, '../../scripts/postgres-cluster.sh')

export interface TestPostgres {
  /** `postgres://dms:<password>@127.0.0.1:<port>/dms` */
  url: string
  /** The cluster's folder (removed by `stop`). */
  dir: string
  stop(): Promise<void>
}

/** Whether the server programs are here (initdb and pg_ctl). */
export function hasPostgresServer(): boolean {
  const lib = '/usr/lib/postgresql'
  if (existsSync(lib) && readdirSync(lib).some((v) => existsSync(join(lib, v, 'bin', 'initdb')))) return true
  return (process.env.PATH ?? '').split(':').some((d) => d !== '' && existsSync(join(d, 'initdb')))
}

/** No PostgreSQL server programs under CI: the tests that need one fail rather than skip. */
export class PostgresMissingError extends Error {
  override name = 'PostgresMissingError'
  constructor() {
    super('CI=true and no PostgreSQL server programs (initdb): run scripts/postgres-bootstrap.sh')
  }
}

/**
 * A fresh cluster; undefined (the caller skips) when the server programs are missing, unless
 * `CI` is `true` in `o.env`: then it throws PostgresMissingError. `o.hasServer` says whether the
 * programs are here. @default process.env, hasPostgresServer
 */
export async function startPostgres(
  o: { env?: NodeJS.ProcessEnv; hasServer?: () => boolean } = {},
): Promise<TestPostgres | undefined> {
  if (!(o.hasServer ?? hasPostgresServer)()) {
    if ((o.env ?? process.env).CI === 'true') throw new PostgresMissingError()
    return undefined
  }
  const parent = await mkdtemp(join(tmpdir(), 'dms-pg-'))
  // As root the server runs as `postgres`, which must reach the cluster's folder (not list it).
  await chmod(parent, 0o711)
  const dir = join(parent, 'cluster')
  try {
    const { stdout } = await run('bash', [SCRIPT, 'start', dir], { timeout: 60_000 })
    return {
      url: stdout.trim(),
      dir,
      stop: async () => {
        await run('bash', [SCRIPT, 'stop', dir], { timeout: 60_000 })
        await rm(parent, { recursive: true, force: true })
      },
    }
  } catch (err) {
    // A start that failed half way still stops what it started.
    await run('bash', [SCRIPT, 'stop', dir]).catch(() => undefined)
    await rm(parent, { recursive: true, force: true })
    throw err
  }
}
