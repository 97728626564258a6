/**
 * Job ids as users type them: a full id, or a unique prefix of at least 4 hex characters (as
 * `docker` and `git` take), resolved against the requester's job list.
 */
import { ApiClient } from '../api/client.js'
import { CliError } from './output.js'

const PREFIX = /^[0-9a-f]{4}[0-9a-f-]{0,31}$/

export async function resolveJobId(socket: string, id: string): Promise<string> {
  if (!PREFIX.test(id) || id.length >= 36) return id
  const { jobs } = await new ApiClient(socket)
    .ok<{ jobs: Array<{ id: string }> }>('GET', '/v1/jobs')
    .catch(() => ({
      jobs: [] as Array<{ id: string }>,
    }))
  const matches = jobs.filter((j) => j.id.startsWith(id)).map((j) => j.id)
  if (matches.length === 1) return matches[0]
  if (matches.length > 1)
    throw new CliError(
      `job id ${id} is ambiguous: ${matches.slice(0, 5).join(', ')}${matches.length > 5 ? ', …' : ''}`,
    )
  return id
}
