/** What a contract-db store refuses or fails with (specs/contract-db.md, "Storage backends"). */
import { DmsError } from '../../../actors/errors.js'

/**
 * A transaction still conflicted with others (serialization failure or deadlock) after every
 * retry: nothing was written; the operation may be sent again.
 */
export class StoreConflictError extends DmsError<{ attempts: number }> {
  constructor(attempts: number, options?: ErrorOptions) {
    super(
      'STORE_CONFLICT',
      `the transaction conflicted with others ${attempts} times: nothing was written`,
      { attempts },
      options,
    )
  }
}

/** The database holds a schema newer than this code knows: a newer dms wrote it. */
export class StoreSchemaError extends DmsError<{ found: number; known: number }> {
  constructor(found: number, known: number) {
    super(
      'STORE_SCHEMA_NEWER',
      `the database's contract-db schema is version ${found}, newer than this dms knows (${known}): upgrade dms`,
      { found, known },
    )
  }
}
