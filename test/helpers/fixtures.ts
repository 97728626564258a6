/**
 * Stored records of an earlier DMS version (test/fixtures/<version>/, written by
 * scripts/capture-fixtures.ts), loaded into a fresh data dir so today's code starts on them.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { Level } from 'level'

const FIXTURES = join(import.meta.dirname, '..', 'fixtures')

/** One node's records: sublevel -> key -> value (JSON, unless listed in `raw`). */
export interface NodeFixture {
  node: string
  peerId: string
  /** The node's sealed key file (`node.key`), passphrase 'test passphrase'. */
  nodeKey: unknown
  sublevels: Record<string, Record<string, unknown>>
  /** Sublevel -> keys whose value is kept as the raw string (not JSON). */
  raw?: Record<string, string[]>
}

/** What was captured: when (on the nodes' clock), the jobs and their states, the nodes' peer ids. */
export interface FixtureManifest {
  capturedAt: number
  /** Which code stored them, where not a release (e.g. main at a commit). */
  capturedFrom?: string
  jobs: { completed: string; running: string; pastBids: string }
  states: Record<string, string>
  nodes: Record<string, string>
}

export async function loadManifest(version: string): Promise<FixtureManifest> {
  return JSON.parse(await readFile(join(FIXTURES, version, 'manifest.json'), 'utf8')) as FixtureManifest
}

export async function loadFixture(version: string, node: string): Promise<NodeFixture> {
  return JSON.parse(await readFile(join(FIXTURES, version, `${node}.json`), 'utf8')) as NodeFixture
}

/** The records of `sublevel`, as stored values (parsed JSON). */
export function recordsOf<T>(f: NodeFixture, sublevel: string): T[] {
  return Object.values(f.sublevels[sublevel] ?? {}) as T[]
}

/**
 * Writes a node's key file and every record, byte for byte as the earlier version stored them,
 * into `dataDir` (created), ready for a node to start on.
 */
export async function writeFixture(f: NodeFixture, dataDir: string): Promise<void> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 })
  await writeFile(join(dataDir, 'node.key'), JSON.stringify(f.nodeKey), { mode: 0o600 })
  const db = new Level<string, string>(join(dataDir, 'db'), { valueEncoding: 'utf8' })
  await db.open()
  try {
    const ops = Object.entries(f.sublevels).flatMap(([sub, records]) =>
      Object.entries(records).map(([key, value]) => ({
        type: 'put' as const,
        key: `!${sub}!${key}`,
        value: f.raw?.[sub]?.includes(key) === true ? String(value) : JSON.stringify(value),
      })),
    )
    await db.batch(ops)
  } finally {
    await db.close()
  }
}

/**
 * A clock that starts at `at` (e.g. the fixture's capture time) and runs at real speed with the
 * runtime's timers: a restored node sees the time just after its records were written, so their
 * absolute deadlines (bids, locks, credentials, a running job's liveness) are where they were.
 */
export function clockFrom(at: number) {
  const offset = at - Date.now()
  return {
    now: () => Date.now() + offset,
    setTimeout: (fn: () => void, ms: number): unknown => setTimeout(fn, Math.max(0, ms)).unref(),
    clearTimeout: (handle: unknown) => clearTimeout(handle as NodeJS.Timeout),
  }
}
