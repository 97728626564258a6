/** The data-plane routes' shapes: `/v1/blobs...`, a job's logs and outputs (specs/data-plane.md). */
import { Type, type Static } from '@sinclair/typebox'
import { described, int, opt, str } from './common.js'
import { OutputArchive, OutputFile } from './jobs.js'

/** `PUT /v1/blobs` (201): the uploaded blob's id. */
export const BlobReply = Type.Object(
  { sha256: Type.String(described('refer to it in a job spec: inputs[].sha256')), size: int },
  { $id: 'Blob' },
)
export type BlobReply = Static<typeof BlobReply>

const output = { stdout: str, stderr: str, truncated: Type.Boolean() }

/** `GET /v1/jobs/:id/logs`: a job's output so far (its result's once it came). */
export const LogsReply = Type.Object(
  {
    ...output,
    members: opt(Type.Array(Type.Object({ name: str, ...output }), described("a pod's, member by member"))),
  },
  { $id: 'Logs' },
)
export type LogsReply = Static<typeof LogsReply>

/** One line of `GET /v1/jobs/:id/logs?follow=true` (NDJSON): a piece of output, or the end. */
export const LogLine = Type.Union(
  [
    Type.Object({
      stream: Type.Union([Type.Literal('stdout'), Type.Literal('stderr')]),
      data: str,
      member: opt(str),
    }),
    Type.Object({ end: Type.Literal(true), state: str }),
  ],
  { $id: 'LogLine' },
)
export type LogLine = Static<typeof LogLine>

/** `GET /v1/jobs/:id/outputs`: the outputs' manifest and archive, once fetched. */
export const OutputsReply = Type.Object(
  {
    state: str,
    archive: Type.Union([OutputArchive, Type.Null()]),
    files: Type.Array(OutputFile),
    verified: Type.Union([Type.Boolean(), Type.Null()], described('the outputs matched the signed hash')),
  },
  { $id: 'Outputs' },
)
export type OutputsReply = Static<typeof OutputsReply>
