/**
 * What the provider records when a run's result is made: its receipt goes into the books
 * (books.ts), and the result is kept for a requester that asks for it again (kept-results.ts),
 * until an hour after the settlement of its contract is kept in the books. Both are done by the
 * delivery, before the result is sent (bid-actors.ts `deliverActor`), not from the stored
 * transitions: those are coalesced, and a result delivered at once is `released` before its
 * outcome state is ever written.
 */
import type { Logger } from 'pino'
import type { JobResult } from '../protocol/messages.js'
import type { BookEntry, ProviderBooks } from './books.js'
import type { KeptResults } from './kept-results.js'

export interface OutcomeDeps {
  books: Pick<ProviderBooks, 'resulted' | 'events'>
  results: Pick<KeptResults, 'keep' | 'settled'>
  log: Logger
}

/** Books the receipt of `message` and keeps it for `requester` (each best effort, logged). */
export async function keepOutcome(
  d: OutcomeDeps,
  contractId: string,
  requester: string,
  message: JobResult,
): Promise<void> {
  await d.books.resulted(contractId, message.receipt).catch((err: unknown) => {
    d.log.warn({ err, contractId }, 'receipt not kept in the books')
  })
  await d.results.keep(contractId, requester, message)
}

/** Tells the kept results of each contract whose settlement the books keep (kept a while more). */
export function settleKeptResults(d: OutcomeDeps): void {
  d.books.events.on('settled', (e: BookEntry) => void d.results.settled(e.contractId).catch(() => {}))
}
