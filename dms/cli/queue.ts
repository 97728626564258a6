/**
 * `dms queue create|list|status|drain|cancel`: the requester's queues (batches of jobs) over its
 * REST socket (specs/queues.md). Tables with headers by default, `--json` for the replies as sent.
 */
import type { Command } from 'commander'
import { ApiClient, ApiClientError, RouteMissingError } from '../api/client.js'
import { parseWholeNumber, UnitError } from '../resources/units.js'
import { CliError, printJson, printSafe } from './output.js'
import { printTable } from './table.js'

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

type Opts = { socket: string; json?: boolean }

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

const row = (q: QueueView) => [
  q.id,
  q.tag,
  q.state,
  q.counts.active,
  q.counts.completed,
  q.counts.failed,
  q.counts.cancelled,
]
const HEADERS = ['ID', 'TAG', 'STATE', 'ACTIVE', 'COMPLETED', 'FAILED', 'CANCELLED']

function show(q: QueueView, o: Opts): void {
  if (o.json) return printJson(q)
  printTable(HEADERS, [row(q)])
}

async function call(o: Opts, method: string, path: string, body?: unknown): Promise<QueueView> {
  return new ApiClient(o.socket).ok<QueueView>(method, path, body).catch((err: unknown) => problem(err))
}

export function registerQueueCommands(program: Command, socketOpt: [string, string, string]): void {
  const queue = program
    .command('queue')
    .description('group jobs in queues: create, list, status, drain, cancel')
  queue
    .command('create')
    .description('create a queue; post jobs to it with "queue": <id> in their spec')
    .argument('<tag>', 'a name for people (1-64 characters)')
    .option('--max-retries <n>', 'default retries of its jobs that set none (0-10)')
    .option('--idle-expiry <seconds>', 'expire after this long with no live job (default: the node config)')
    .option('--json', 'print JSON')
    .option(...socketOpt)
    .action(async (tag: string, o: Opts & { maxRetries?: string; idleExpiry?: string }) => {
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
    })
  queue
    .command('list')
    .description('every queue, newest first, with the counts of its jobs')
    .option('--json', 'print JSON')
    .option(...socketOpt)
    .action(async (o: Opts) => {
      const { queues } = await new ApiClient(o.socket)
        .ok<{ queues: QueueView[] }>('GET', '/v1/queues')
        .catch((err: unknown) => problem(err))
      if (o.json) return printJson({ queues })
      if (queues.length === 0) return printSafe('no queues')
      printTable(HEADERS, queues.map(row))
    })
  queue
    .command('status')
    .description("a queue's state, counts and history")
    .argument('<id>', 'queue id')
    .option('--json', 'print JSON')
    .option(...socketOpt)
    .action(async (id: string, o: Opts) => {
      const q = await call(o, 'GET', `/v1/queues/${encodeURIComponent(id)}`)
      if (o.json) return printJson(q)
      show(q, o)
      printSafe(`max retries: ${q.maxRetries ?? 'per job'}; idle expiry: ${q.idleExpirySeconds} s`)
      for (const h of q.history) printSafe(`  ${new Date(h.at).toISOString()}  ${h.state}`)
    })
  queue
    .command('drain')
    .description('refuse new jobs; the queue ends "drained" with its last live job')
    .argument('<id>', 'queue id')
    .option('--json', 'print JSON')
    .option(...socketOpt)
    .action(async (id: string, o: Opts) =>
      show(await call(o, 'POST', `/v1/queues/${encodeURIComponent(id)}/drain`), o),
    )
  queue
    .command('cancel')
    .description('cancel the queue and every live job of it')
    .argument('<id>', 'queue id')
    .option('--json', 'print JSON')
    .option(...socketOpt)
    .action(async (id: string, o: Opts) =>
      show(await call(o, 'DELETE', `/v1/queues/${encodeURIComponent(id)}`), o),
    )
}
