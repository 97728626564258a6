/**
 * The contract-db's store chosen by its config (specs/contract-db.md, "Storage backends"): level
 * over the process's own database (the default), or PostgreSQL at `store.url`. The password comes
 * from the URL or from `store.passwordFile`, and is never logged: what is logged and shown is
 * the backend and the URL without it.
 */
import { readFile } from 'node:fs/promises'
import type { Logger } from 'pino'
import { DmsError } from '../../../actors/errors.js'
import type { Db } from '../../store/db.js'
import { LevelContractDbStore } from './level.js'
import type { ContractDbStore, StoreBackend } from './port.js'

/** The `store` section of a contract-db's config. */
export interface ContractDbStoreConfig {
  /** @default 'level' */
  backend: StoreBackend
  /** `postgres://user@host:port/db`: required for postgres. */
  url?: string
  /** A file whose first line is the database password. @default none (the URL's, or PGPASSWORD) */
  passwordFile?: string
  /** Connections to the database. @default 4 */
  maxConnections?: number
}

/** The password file could not be read: the contract-db does not start. */
export class StorePasswordFileError extends DmsError<{ path: string }> {
  constructor(path: string, cause: unknown) {
    super(
      'STORE_PASSWORD_FILE',
      `cannot read store.passwordFile ${path}: ${(cause as Error).message}`,
      { path },
      { cause },
    )
  }
}

/** A store open and ready (its schema migrated), and what closes it. */
export async function openContractDbStore(
  cfg: ContractDbStoreConfig | undefined,
  c: { db: Db; log: Logger },
): Promise<{ store: ContractDbStore; close: () => Promise<void> }> {
  if (cfg === undefined || cfg.backend === 'level')
    return { store: new LevelContractDbStore(c.db), close: () => Promise.resolve() }
  const password = cfg.passwordFile === undefined ? undefined : await passwordIn(cfg.passwordFile)
  // Loaded only for this backend: a level contract-db does without the client.
  const { PostgresContractDbStore, redactedUrl } = await import('./postgres.js')
  const store = new PostgresContractDbStore(
    { url: cfg.url ?? '', password, maxConnections: cfg.maxConnections },
    { log: c.log },
  )
  try {
    await store.open()
  } catch (err) {
    await store.close().catch(() => undefined)
    throw err
  }
  c.log.info({ backend: 'postgres', url: redactedUrl(cfg.url ?? '') }, 'contract-db books in PostgreSQL')
  return { store, close: () => store.close() }
}

/** The first line of a password file (`store.passwordFile`, `migrate --password-file`). */
export async function passwordIn(path: string): Promise<string> {
  try {
    return (await readFile(path, 'utf8')).split('\n')[0].replace(/\r$/, '')
  } catch (err) {
    throw new StorePasswordFileError(path, err)
  }
}
