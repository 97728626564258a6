/**
 * What the data plane sends between peers: chunk requests and chunks of blobs, and the input files
 * an invocation names. Declared here, with the messages that carry them, so that the protocol
 * imports nothing of dms/blobs/ (which implements them).
 */
import type { BlobGrant } from '../contracts/model.js'

/**
 * Where an input comes from when it is not a blob of the requester: a file (`entry`) of another
 * provider's output `archive`, fetched from that provider (`peer`, `addrs`) under `grant`, the
 * requester's delegation of its own grant (specs/data-plane.md, "Delegated grants").
 */
export interface InputSource<G = BlobGrant> {
  peer: string
  addrs: string[]
  archive: string
  archiveSize: number
  entry: string
  grant: G
}

/** One input file of a job: where it appears under /inputs and which blob it is. */
export interface InputFile {
  path: string
  sha256: string
  size: number
  /** Absent: a blob of the requester's. */
  source?: InputSource
}

export interface ChunkRequest {
  sha256: string
  offset: number
  length: number
  /** A delegation of the owner's grant to the sender (another provider fetching a task's input). */
  grant?: BlobGrant
}
export interface Chunk {
  /** The blob's total size. */
  size: number
  data: Uint8Array
}
