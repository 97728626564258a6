/**
 * Ids as users type them for things listed by the node (queues; workflows next): the full id, a
 * name (a queue's tag) that one entry has, or a unique prefix of at least 4 hex characters, as
 * `dms job` takes for jobs (job-id.ts). An ambiguous name or prefix is refused, listing matches.
 */
import { CliError } from './output.js'

const PREFIX = /^[0-9a-f]{4}[0-9a-f-]{0,31}$/

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
  // A full UUID is taken as is: no list is fetched for it.
  if (given.length >= 36 || given.length > 256) return given
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
