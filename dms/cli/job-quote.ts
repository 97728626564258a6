/** `dms job quote`: one bid round for the spec, no contract; the bids (ranked) and the declines. */
import { ApiClient } from '../api/client.js'
import { apiProblem } from './job.js'
import { specFrom, type JobRunOptions } from './job-run.js'
import { print, printData, printSafe } from './output.js'
import { printTable } from './table.js'

interface QuoteView {
  bids: Array<{ provider: string; total: number; price: string; earliestStart: number; rank: number }>
  declines: Array<{ provider: string; reasons: string[] }>
}

export async function jobQuoteCommand(command: string[], opts: JobRunOptions): Promise<void> {
  const spec = await specFrom(opts, command)
  const quote = await new ApiClient(opts.socket)
    .ok<QuoteView>('POST', '/v1/quotes', spec)
    .catch((err: unknown) => apiProblem(err, 'quote refused: '))
  if (opts.json) return printData(quote)
  if (quote.bids.length === 0) print('no bids')
  else
    printTable(
      ['RANK', 'PROVIDER', 'TOTAL', 'PRICE', 'START'],
      quote.bids.map((b) => [b.rank, b.provider, b.total, b.price, new Date(b.earliestStart).toISOString()]),
    )
  for (const d of quote.declines) printSafe(`declined: ${d.provider}: ${d.reasons.join('; ')}`)
}
