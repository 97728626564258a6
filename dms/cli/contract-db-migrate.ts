/**
 * `dms contract-db migrate --to postgres://...`: copies a stopped level contract-db's books into
 * an empty PostgreSQL schema, checks them, and prints the figures of both (specs/contract-db.md,
 * "Migrating from level to PostgreSQL"). The password comes from the URL or `--password-file`
 * and is never printed. The level data is only read; a failed copy empties the target again.
 */
import { stat } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { DataDirInUseError, openDb, type Db } from '../store/db.js'
import type { MigrateProgress, MigrateReport } from '../contract-db/store/migrate.js'
import type { PostgresContractDbStore } from '../contract-db/store/postgres.js'
import { CliError, print, printData } from './output.js'
import { printTable } from './table.js'

export interface MigrateOptions {
  dataDir: string
  to: string
  passwordFile?: string
  json?: boolean
}

/** How often a long copy says how far it came, on stderr. */
const PROGRESS_EVERY_MS = 2000

export async function migrateCommand(o: MigrateOptions): Promise<void> {
  const dataDir = resolve(o.dataDir)
  const url = targetUrl(o.to)
  const [
    { LevelContractDbStore },
    { PostgresContractDbStore, redactedUrl },
    { migrateBooks },
    { passwordIn },
  ] = await Promise.all([
    import('../contract-db/store/level.js'),
    import('../contract-db/store/postgres.js'),
    import('../contract-db/store/migrate.js'),
    import('../contract-db/store/open.js'),
  ])
  const shown = redactedUrl(url)
  const password = o.passwordFile === undefined ? undefined : await passwordIn(o.passwordFile).catch(cliError)
  const db = await openSource(dataDir)
  let target: PostgresContractDbStore | undefined
  let copying = false
  try {
    const source = new LevelContractDbStore(db)
    await source.open()
    target = new PostgresContractDbStore({ url, password, maxConnections: 2 })
    await target.open().catch((err: unknown) => {
      throw new CliError(`cannot open ${shown}: ${(err as Error).message}`)
    })
    const progress = progressLine()
    copying = true
    const report = await migrateBooks(source, target, { onProgress: progress })
    copying = false
    if (o.json) printData({ from: dataDir, to: shown, ...report })
    else show(report, dataDir, shown)
  } catch (err) {
    const code = (err as { code?: string }).code
    // Emptied again only when this run wrote to it: a target found non-empty is left as it was.
    if (copying && target !== undefined && code !== 'TARGET_NOT_EMPTY') {
      const emptied = await target.clear().then(
        () => true,
        () => false,
      )
      process.stderr.write(
        emptied
          ? 'the copy failed: the target was emptied again; the level data is untouched\n'
          : `the copy failed and the target could not be emptied: empty its cdb_* tables before trying again; the level data is untouched\n`,
      )
    }
    if (err instanceof CliError) throw err
    if (code === 'TARGET_NOT_EMPTY' || code === 'SOURCE_EMPTY' || code === 'BOOKS_MISMATCH')
      throw new CliError(`${code}: ${(err as Error).message}`)
    throw new CliError(`migration to ${shown} failed: ${redact((err as Error).message, url, password)}`)
  } finally {
    await target?.close().catch(() => undefined)
    await db.close()
  }
}

/** The URL, checked to be one of PostgreSQL. */
function targetUrl(to: string): string {
  let u: URL
  try {
    u = new URL(to)
  } catch {
    throw new CliError('--to must be a PostgreSQL URL: postgres://user@host:port/database')
  }
  if (u.protocol !== 'postgres:' && u.protocol !== 'postgresql:')
    throw new CliError(`--to must be a PostgreSQL URL (postgres://...), not ${u.protocol}`)
  return to
}

/** The contract-db's level database, refused while the contract-db runs on it. */
async function openSource(dataDir: string): Promise<Db> {
  const path = join(dataDir, 'db')
  // openDb would create an empty database where none is: a wrong --data-dir says so instead.
  if (
    !(await stat(path).then(
      (s) => s.isDirectory(),
      () => false,
    ))
  )
    throw new CliError(`no contract-db data in ${dataDir} (no ${path}): give its --data-dir`)
  try {
    return await openDb(path)
  } catch (err) {
    if (err instanceof DataDirInUseError)
      throw new CliError(
        `the contract-db on ${dataDir} is running: stop it first, so that its books do not change during the copy`,
      )
    throw err
  }
}

function progressLine(): (p: MigrateProgress) => void {
  let last = Date.now()
  return (p) => {
    const t = Date.now()
    if (t - last < PROGRESS_EVERY_MS && p.contracts < p.total) return
    last = t
    process.stderr.write(`${p.phase === 'copy' ? 'copied' : 'checked'} ${p.contracts}/${p.total} contracts\n`)
  }
}

function show(r: MigrateReport, from: string, to: string): void {
  const states = [
    ...new Set([...Object.keys(r.source.contracts), ...Object.keys(r.target.contracts)]),
  ].sort() as Array<keyof MigrateReport['source']['contracts']>
  printTable(
    ['FIGURE', 'LEVEL', 'POSTGRES'],
    [
      ...states.map((s) => [`contracts ${s}`, r.source.contracts[s] ?? 0, r.target.contracts[s] ?? 0]),
      ['accounts', r.source.accounts, r.target.accounts],
      ['approvals', r.source.approvals, r.target.approvals],
      ['credited', r.source.credited ?? '-', r.target.credited ?? '-'],
      ['balances', r.source.balances, r.target.balances],
      ['escrow', r.source.escrow, r.target.escrow],
    ],
  )
  print(
    `migrated ${from} to ${to} in ${(r.tookMs / 1000).toFixed(1)} s: every account's balance and escrow, every contract's state and settlement match`,
  )
}

/** A message without the password, wherever a library put it. */
function redact(message: string, url: string, password: string | undefined): string {
  let out = message
  const inUrl = (() => {
    try {
      return decodeURIComponent(new URL(url).password)
    } catch {
      return ''
    }
  })()
  for (const secret of [password, inUrl])
    if (secret !== undefined && secret !== '') out = out.replaceAll(secret, '***')
  return out
}

const cliError = (err: unknown): never => {
  throw new CliError((err as Error).message)
}
