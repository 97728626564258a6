/**
 * The bounded strings of the function descriptors (specs/functions.md, "Bounds"): names, versions,
 * relative paths and blob references. Paths are strict (letters, digits and `._+-`, no segment
 * starting with `.`), so no `..`, no absolute path, nothing a shell reads specially: a path is
 * both a file name in the job's /inputs and a word of the worker's launch command.
 */
import { Type } from '@sinclair/typebox'
import { MAX_BLOB_BYTES } from '../blobs/store.js'
import { strictObject } from '../schema.js'

/** A worker, function or attachment name. */
export const nameSchema = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: '^[A-Za-z0-9][A-Za-z0-9_.+-]*$',
})
/** A function version or a build system version. */
export const versionSchema = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: '^[A-Za-z0-9][A-Za-z0-9_.+-]*$',
})
/** A relative path of safe segments, none starting with `.`. */
export const relPathSchema = Type.String({
  minLength: 1,
  maxLength: 256,
  pattern: '^[A-Za-z0-9_+-][A-Za-z0-9._+-]*(/[A-Za-z0-9_+-][A-Za-z0-9._+-]*)*$',
})
/** A blob's sha256, as the blob store names it. */
export const sha256Schema = Type.String({ pattern: '^[0-9a-f]{64}$' })
/** A blob's size in bytes, at most the blob store's largest. */
export const sizeSchema = Type.Integer({ minimum: 0, maximum: MAX_BLOB_BYTES })
/** A blob by content: its sha256 and size. */
export const blobRefSchema = strictObject({ sha256: sha256Schema, size: sizeSchema })
/** A file of a worker: where it lands and its content. */
export const fileRefSchema = strictObject({ path: relPathSchema, sha256: sha256Schema, size: sizeSchema })

/** A blob by content. */
export interface BlobRef {
  sha256: string
  size: number
}
