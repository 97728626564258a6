/**
 * Ids as users type them for things listed by the node (queues, workflows): the full id, a name
 * (a queue's tag, a workflow's name) that one entry has, or a unique prefix of at least 4 hex
 * characters, as `dms job` takes for jobs (job-id.ts). An ambiguous name or prefix is refused,
 * listing the matches.
 */
import { ApiClient } from '../api/client.js'
import { CliError } from './output.js'

const PREFIX = /^[0-9a-f]{4}[0-9a-f-]{0,31}$/
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** One listed entry: its id, and the name a user may give instead. */
export interface Listed {
  id: string
  name?: string
}

/**
 * The id `given` stands for among `list()`; `given` itself when nothing matches (the node then
 * answers "not found" in its own words). `what` names the kind in errors ("queue").
 */
export async function resolveListedId(
  what: string,
  given: string,
  list: () => Promise<readonly Listed[]>,
): Promise<string> {
  // A full UUID is taken as is: no list is fetched for it (a name may be as long: tags go to 64).
  if (UUID.test(given) || given.length > 256) return given
  const entries = await list().catch(() => [] as Listed[])
  if (entries.some((e) => e.id === given)) return given
  const named = entries.filter((e) => e.name === given)
  const prefixed = PREFIX.test(given) ? entries.filter((e) => e.id.startsWith(given)) : []
  const matches = [...new Set([...named, ...prefixed].map((e) => e.id))]
  if (matches.length === 1) return matches[0]
  if (matches.length > 1)
    throw new CliError(
      `${what} ${JSON.stringify(given)} is ambiguous: ${matches.slice(0, 5).join(', ')}${matches.length > 5 ? ', …' : ''}; give more of the id`,
    )
  return given
}

/** A queue by its id, its tag, or a unique id prefix (`GET /v1/queues`). */
export const resolveQueueId = (socket: string, given: string): Promise<string> =>
  resolveListedId('queue', given, async () =>
    (
      await new ApiClient(socket).ok<{ queues: Array<{ id: string; tag: string }> }>('GET', '/v1/queues')
    ).queues.map((q) => ({ id: q.id, name: q.tag })),
  )

/**
 * `--queue` of `job run` and `job list`: the queue's id, refused with how to list them when no
 * queue has that id, tag or prefix (the job spec and the list filter take only an id).
 */
export async function queueFlag(socket: string, given: string): Promise<string> {
  const id = await resolveQueueId(socket, given)
  if (!UUID.test(id))
    throw new CliError(
      `--queue ${JSON.stringify(given)}: no queue has that id, tag or id prefix (dms queue ls lists them)`,
    )
  return id
}

/** A workflow by its id, its name, or a unique id prefix (`GET /v1/workflows`). */
export const resolveWorkflowId = (socket: string, given: string): Promise<string> =>
  resolveListedId(
    'workflow',
    given,
    async () =>
      (
        await new ApiClient(socket).ok<{ workflows: Array<{ id: string; name?: string }> }>(
          'GET',
          '/v1/workflows',
        )
      ).workflows,
  )
