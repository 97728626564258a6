/**
 * `dms action post|status`: actions on the requester node (specs/functions.md). `post` sends a
 * file of action descriptors (one, a list, or `{ actions: [...] }`) as one batch; each runs as a
 * job on the worker that implements it, unless a verified result answers it from the cache.
 */
import { readFile } from 'node:fs/promises'
import { ApiClient, ApiClientError, RouteMissingError } from '../api/client.js'
import { parseWholeNumber, UnitError } from '../resources/units.js'
import { CliError, printData } from './output.js'
import { printTable } from './table.js'

export type Opts = { socket: string; json?: boolean }

interface ActionView {
  id: string
  state: string
  function: string
  version: string
  jobId: string
  cached?: boolean
  outputs?: Array<{ path: string; sha256: string; size: number }>
  error?: { code: string; message: string }
}

function problem(err: unknown): never {
  if (err instanceof ApiClientError || err instanceof RouteMissingError) throw new CliError(err.message)
  throw err
}

const row = (a: ActionView) => [
  a.id.slice(0, 12),
  `${a.function}@${a.version}`,
  a.state,
  a.cached === true ? 'yes' : 'no',
  a.jobId,
]

export async function actionPostCommand(
  o: Opts & { file: string; maxPrice: string; queue?: string; cache?: boolean },
): Promise<void> {
  let maxPrice: number
  try {
    maxPrice = parseWholeNumber(o.maxPrice, 'micro-tokens')
  } catch (err) {
    if (err instanceof UnitError) throw new CliError(`--max-price: ${err.message}`)
    throw err
  }
  let doc: unknown
  try {
    doc = JSON.parse(await readFile(o.file, 'utf8'))
  } catch (err) {
    throw new CliError(`cannot read ${o.file}: ${(err as Error).message}`)
  }
  const actions = Array.isArray(doc)
    ? doc
    : typeof doc === 'object' && doc !== null && 'actions' in doc
      ? doc.actions
      : [doc]
  const { actions: views } = await new ApiClient(o.socket)
    .ok<{ actions: ActionView[] }>('POST', '/v1/actions', {
      actions,
      maxPrice,
      ...(o.queue !== undefined ? { queue: o.queue } : {}),
      ...(o.cache === false ? { cache: false } : {}),
    })
    .catch((err: unknown) => problem(err))
  if (o.json) return printData({ actions: views })
  printTable(['ACTION', 'FUNCTION', 'STATE', 'CACHED', 'JOB'], views.map(row))
}

export async function actionStatusCommand(id: string, o: Opts): Promise<void> {
  const a = await new ApiClient(o.socket)
    .ok<ActionView>('GET', `/v1/actions/${encodeURIComponent(id)}`)
    .catch((err: unknown) => problem(err))
  if (o.json) return printData(a)
  printTable(['ACTION', 'FUNCTION', 'STATE', 'CACHED', 'JOB'], [row(a)])
  if (a.error !== undefined) printTable(['ERROR', 'MESSAGE'], [[a.error.code, a.error.message]])
  if (a.outputs !== undefined && a.outputs.length > 0)
    printTable(
      ['OUTPUT', 'SHA256', 'SIZE'],
      a.outputs.map((f) => [f.path, f.sha256, f.size]),
    )
}
