/**
 * A command that reads a node's state from its data directory (the node not running) reads only
 * what a node made: it never creates the folder or an empty database as a side effect (issue 35).
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { CliError } from './output.js'

/**
 * The path of the node database under `dataDir`, or a CliError saying that no node has used that
 * data directory and how to point at one.
 */
export function existingNodeDb(dataDir: string): string {
  const db = join(dataDir, 'db')
  if (!existsSync(db))
    throw new CliError(
      `no node is running on this socket and no node has used ${dataDir} (no db there): start one with \`dms run\`, or give its --data-dir or --socket`,
    )
  return db
}
