/**
 * What a user of a client generated from specs/openapi.json writes (openapi-typescript's types in
 * api.d.ts beside this file, openapi-fetch's `createClient`): upload an input, post a job spec,
 * follow its logs to the end, read its status, logs, outputs, one output file by its path and the
 * outputs archive, then post the spec read back as is. No cast and no hand-written type: it must
 * compile under `tsc --strict` against the freshly generated types (scripts/check-openapi.sh), and
 * test/integration/api/openapi-client.spec.ts runs it against a real node.
 */
import createClient from 'openapi-fetch'
import type { components, paths } from './api.js'

export type JobSpec = components['schemas']['JobSpec']
export type Job = components['schemas']['Job']
export type LogLine = components['schemas']['LogLine']

/** What the round trip saw, for the caller to check. */
export interface RoundTrip {
  blob: components['schemas']['Blob']
  job: Job
  followed: LogLine[]
  logs: components['schemas']['Logs']
  outputs: components['schemas']['Outputs']
  /** Each output file's bytes, read one by one by its path. */
  files: Record<string, Uint8Array>
  archive: Uint8Array
  /** The job posted again from `job.postedSpec`. */
  again: { id: string; state: string }
}

/** A failed call's error, thrown with the route's stable code. */
class CallError extends Error {
  override readonly name = 'CallError'
  constructor(
    what: string,
    readonly code: string,
    message: string,
  ) {
    super(`${what}: ${code}: ${message}`)
  }
}

function ok<T>(what: string, r: { data?: T; error?: { error: { code: string; message: string } } }): T {
  if (r.error !== undefined) throw new CallError(what, r.error.error.code, r.error.error.message)
  if (r.data === undefined) throw new CallError(what, 'NO_BODY', 'the answer had no body')
  return r.data
}

/** NDJSON lines from a byte stream. */
async function* lines(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder()
  let rest = ''
  for await (const chunk of body) {
    rest += decoder.decode(chunk, { stream: true })
    const parts = rest.split('\n')
    rest = parts.pop() ?? ''
    yield* parts.filter((l) => l !== '')
  }
  if (rest !== '') yield rest
}

/**
 * Runs the round trip against the node at `baseUrl` (its TCP listener) with its bearer `token`.
 * `spec` is posted with `input` uploaded first and added to its inputs as `in.txt`.
 */
export async function roundTrip(
  baseUrl: string,
  token: string,
  spec: JobSpec,
  input: string,
): Promise<RoundTrip> {
  const api = createClient<paths, 'application/json'>({
    baseUrl,
    headers: { authorization: `Bearer ${token}` },
  })
  const blob = ok(
    'upload',
    await api.PUT('/v1/blobs', {
      body: input,
      bodySerializer: (b) => b,
      headers: { 'content-type': 'application/octet-stream' },
    }),
  )
  const posted = ok(
    'post',
    await api.POST('/v1/jobs', {
      body: { ...spec, inputs: [...(spec.inputs ?? []), { path: 'in.txt', sha256: blob.sha256 }] },
    }),
  )
  const id = posted.id
  const path = { id }
  // Follow the live output until the job ends: the stream's last line says how.
  const follow = await api.GET('/v1/jobs/{id}/logs', {
    params: { path, query: { follow: 'true' } },
    parseAs: 'stream',
  })
  if (follow.data === undefined || follow.data === null)
    throw new CallError('follow', follow.error?.error.code ?? 'NO_BODY', 'no stream')
  const followed: LogLine[] = []
  for await (const l of lines(follow.data)) followed.push(JSON.parse(l) as LogLine)

  const job = ok('status', await api.GET('/v1/jobs/{id}', { params: { path } }))
  const logs = ok('logs', await api.GET('/v1/jobs/{id}/logs', { params: { path } }))
  const outputs = ok('outputs', await api.GET('/v1/jobs/{id}/outputs', { params: { path } }))
  const files: Record<string, Uint8Array> = {}
  for (const f of outputs.files) {
    const bytes = ok(
      `output ${f.path}`,
      await api.GET('/v1/jobs/{id}/outputs/{path}', {
        params: { path: { id, path: f.path } },
        parseAs: 'arrayBuffer',
      }),
    )
    files[f.path] = new Uint8Array(bytes)
  }
  const archive = new Uint8Array(
    ok('archive', await api.GET('/v1/jobs/{id}/outputs.tar', { params: { path }, parseAs: 'arrayBuffer' })),
  )
  // The spec read back, posted again as it is.
  const again = ok('post again', await api.POST('/v1/jobs', { body: job.postedSpec }))
  return { blob, job, followed, logs, outputs, files, archive, again }
}
