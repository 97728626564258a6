/**
 * What the provider records when a run's result is made: its receipt goes into the books
 * (books.ts), and the result is kept (before it is sent) until its contract is settled, for a
 * requester that asks for it again (kept-results.ts); a settlement kept in the books drops it.
 */
import type { Logger } from 'pino'
import type { BidBook } from './bid-book.js'
import { OUTCOMES } from './bid-states.js'
import type { BookEntry, ProviderBooks } from './books.js'
import type { KeptResults } from './kept-results.js'

export function recordOutcomes(d: {
  book: Pick<BidBook, 'onTransition'>
  books: Pick<ProviderBooks, 'resulted' | 'events'>
  results: Pick<KeptResults, 'keep' | 'drop'>
  log: Logger
}): void {
  d.book.onTransition((rec) => {
    const ctx = rec.snapshot.context
    const message = ctx.message
    const contractId = ctx.contractId
    if (
      message === undefined ||
      contractId === undefined ||
      !(OUTCOMES as readonly string[]).includes(rec.state)
    )
      return
    void d.books.resulted(contractId, message.receipt).catch((err: unknown) => {
      d.log.warn({ err, contractId }, 'receipt not kept in the books')
    })
    void d.results.keep(contractId, ctx.requester.peer, message).catch((err: unknown) => {
      d.log.warn({ err, contractId }, 'result not kept')
    })
  })
  d.books.events.on('settled', (e: BookEntry) => void d.results.drop(e.contractId).catch(() => {}))
}
