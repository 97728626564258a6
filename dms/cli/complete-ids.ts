/**
 * `dms __complete job|queue|workflow`: the words the completion script offers for an id, one a
 * line, from the node (jobs by id, queues by id and tag, workflows by id and name). Quietly
 * nothing when no node answers, and never slower than a keystroke should wait.
 */
import { ApiClient } from '../api/client.js'
import type { IdKind } from './completion.js'

/** Longest wait for the node: a TAB that hangs is worse than one that offers nothing. */
export const COMPLETE_TIMEOUT_MS = 2000
/** Most words offered. */
const MAX_WORDS = 1000
/**
 * The words offered: a shell reading them must take each as one plain word, so a name with a
 * space, a quote, `$` or a glob character (a tag is the user's free text) is left out.
 */
export const SAFE_WORD = /^[A-Za-z0-9][A-Za-z0-9._:@+=,-]{0,127}$/

async function wordsOf(kind: IdKind, api: ApiClient): Promise<string[]> {
  if (kind === 'job')
    return (await api.ok<{ jobs: Array<{ id: string }> }>('GET', '/v1/jobs?limit=1000')).jobs.map((j) => j.id)
  if (kind === 'queue')
    return (await api.ok<{ queues: Array<{ id: string; tag: string }> }>('GET', '/v1/queues')).queues.flatMap(
      (q) => [q.id, q.tag],
    )
  return (
    await api.ok<{ workflows: Array<{ id: string; name?: string }> }>('GET', '/v1/workflows')
  ).workflows.flatMap((w) => [w.id, ...(w.name !== undefined ? [w.name] : [])])
}

export async function completeIds(kind: IdKind, socket: string): Promise<void> {
  setTimeout(() => process.exit(0), COMPLETE_TIMEOUT_MS).unref()
  let words: string[]
  try {
    words = await wordsOf(kind, new ApiClient(socket))
  } catch {
    return // no node, another role, an older node: nothing to offer
  }
  const safe = [...new Set(words.filter((w) => typeof w === 'string' && SAFE_WORD.test(w)))]
  process.stdout.write(
    safe
      .slice(0, MAX_WORDS)
      .map((w) => `${w}\n`)
      .join(''),
  )
}
