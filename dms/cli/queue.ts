/**
 * `dms queue create|list|status|drain|cancel`: the requester's queues (batches of jobs) over its
 * REST socket (specs/queues.md). Tables with headers by default, `--json` for the replies as sent.
 */
import { ApiClient, ApiClientError, RouteMissingError } from '../api/client.js'
import { parseWholeNumber, UnitError } from '../resources/units.js'
import { CliError, printData, printNote, printSafe } from './output.js'
import { resolveQueueId } from './resolve-id.js'
import { printRows, type Column } from './table.js'

interface QueueView {
  id: string
  tag: string
  state: string
  maxRetries?: number
  idleExpirySeconds: number
  createdAt: number
  lastActivityAt: number
  history: Array<{ state: string; at: number }>
  counts: { active: number; completed: number; failed: number; cancelled: number }
}

export type Opts = { socket: string; json?: boolean }

function problem(err: unknown): never {
  if (err instanceof ApiClientError) throw new CliError(err.message)
  if (err instanceof RouteMissingError) throw new CliError(err.message)
  throw err
}

const whole = (flag: string, v: string | undefined, what: string): number | undefined => {
  if (v === undefined) return undefined
  try {
    return parseWholeNumber(v, what)
  } catch (err) {
    if (err instanceof UnitError) throw new CliError(`${flag}: ${err.message}`)
    throw err
  }
}

const COLUMNS: Array<Column<QueueView>> = [
  { header: 'ID', cell: (q) => q.id },
  { header: 'TAG', cell: (q) => q.tag },
  { header: 'STATE', cell: (q) => q.state },
  { header: 'ACTIVE', cell: (q) => q.counts.active },
  { header: 'COMPLETED', cell: (q) => q.counts.completed },
  { header: 'FAILED', cell: (q) => q.counts.failed },
  { header: 'CANCELLED', cell: (q) => q.counts.cancelled },
  { header: 'MAX RETRIES', cell: (q) => q.maxRetries ?? 'per job', wide: true },
  { header: 'IDLE EXPIRY', cell: (q) => `${q.idleExpirySeconds} s`, wide: true },
  { header: 'CREATED', cell: (q) => new Date(q.createdAt).toISOString(), wide: true },
]

function show(q: QueueView, o: Opts): void {
  if (o.json) return printData(q)
  printRows(COLUMNS, [q])
}

async function call(o: Opts, method: string, path: string, body?: unknown): Promise<QueueView> {
  return new ApiClient(o.socket).ok<QueueView>(method, path, body).catch((err: unknown) => problem(err))
}

export async function queueCreateCommand(
  tag: string,
  o: Opts & { maxRetries?: string; idleExpiry?: string },
): Promise<void> {
  const maxRetries = whole('--max-retries', o.maxRetries, 'retries')
  const idleExpirySeconds = whole('--idle-expiry', o.idleExpiry, 'seconds')
  show(
    await call(o, 'POST', '/v1/queues', {
      tag,
      ...(maxRetries !== undefined ? { maxRetries } : {}),
      ...(idleExpirySeconds !== undefined ? { idleExpirySeconds } : {}),
    }),
    o,
  )
}

export async function queueListCommand(o: Opts): Promise<void> {
  const { queues } = await new ApiClient(o.socket)
    .ok<{ queues: QueueView[] }>('GET', '/v1/queues')
    .catch((err: unknown) => problem(err))
  if (o.json) return printData({ queues })
  if (queues.length === 0) return printNote('no queues')
  printRows(COLUMNS, queues)
}

const queueId = (o: Opts, given: string) => resolveQueueId(o.socket, given)

export async function queueStatusCommand(id: string, o: Opts): Promise<void> {
  id = await queueId(o, id)
  const q = await call(o, 'GET', `/v1/queues/${encodeURIComponent(id)}`)
  if (o.json) return printData(q)
  show(q, o)
  printSafe(`max retries: ${q.maxRetries ?? 'per job'}; idle expiry: ${q.idleExpirySeconds} s`)
  for (const h of q.history) printSafe(`  ${new Date(h.at).toISOString()}  ${h.state}`)
}

/** `drain` (POST .../drain) or `cancel` (DELETE): the queue as it is after. */
export async function queueEndCommand(how: 'drain' | 'cancel', id: string, o: Opts): Promise<void> {
  id = await queueId(o, id)
  const path = `/v1/queues/${encodeURIComponent(id)}`
  show(await (how === 'drain' ? call(o, 'POST', `${path}/drain`) : call(o, 'DELETE', path)), o)
}
