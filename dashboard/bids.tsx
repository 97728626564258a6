/**
 * The bids of a job with their score terms, recomputed by the requester's own ranking
 * (dms/orchestrator/select.ts, the same code) at the time the job ranked them, and the reason the
 * winner won, as the job recorded it.
 */
import { scoreBids, WEIGHTS } from '../dms/orchestrator/select.js'
import { priceView } from '../dms/pricing/price.js'
import { priceOf } from '../dms/pricing/terms.js'
import { FINAL, short, type JobView } from './types.js'

/** Why an ended job has no bid: who declined, who did not answer. */
function noBids(declined: number, connected: number): string {
  if (connected === 0) return 'No bids: no provider was connected.'
  if (declined >= connected) return `No bids: all ${connected} connected providers declined.`
  return `No bids: ${declined} of ${connected} connected providers declined, the others did not answer.`
}

export function Bids({ job }: { job: JobView }) {
  const r = job.record
  const rankedAt = [...r.history].reverse().find((x) => x.state === 'selecting')?.at ?? r.createdAt
  const ranked =
    r.bids.length === 0
      ? []
      : scoreBids(r.bids, {
          maxPrice: r.spec.maxPrice,
          maxDurationSeconds: r.spec.maxDurationSeconds,
          reliability: r.reliability ?? {},
          now: rankedAt,
        })
  const bidOf = new Map(r.bids.map((b) => [b.bidId, b]))
  return (
    <section id="bids">
      <h2>Bids</h2>
      <p class="note">
        score = {WEIGHTS.price} × price + {WEIGHTS.finish} × finish + {WEIGHTS.unreliability} × unreliability;
        lower wins.
      </p>
      {ranked.length === 0 ? (
        <p id="no-bids">
          {!FINAL.has(job.state)
            ? 'No bids yet.'
            : job.state === 'cancelled'
              ? 'No bids before the job was cancelled.'
              : noBids(r.declines.length, r.providersConnected ?? 0)}
        </p>
      ) : (
        <div class="scroll">
          <table>
            <thead>
              <tr>
                <th>#</th>
                <th>Provider</th>
                <th>Total</th>
                <th>Rate</th>
                <th>Price</th>
                <th>Finish</th>
                <th>Unreliability</th>
                <th>Score</th>
              </tr>
            </thead>
            <tbody>
              {ranked.map((x, i) => {
                const b = bidOf.get(x.bidId)
                const won = r.winner?.bidId === x.bidId
                return (
                  <tr class={won ? 'winner' : ''} data-bid={x.bidId} data-provider={x.provider}>
                    <td>{i + 1}</td>
                    <td class="mono" title={x.provider}>
                      {short(x.provider)} {won ? '★' : ''}
                    </td>
                    <td>{b?.total}</td>
                    <td class="rate">{b === undefined ? '' : priceView(priceOf(b)).price}</td>
                    <td>{x.terms.price.toFixed(3)}</td>
                    <td>{x.terms.finish.toFixed(3)}</td>
                    <td>{x.terms.unreliability.toFixed(3)}</td>
                    <td>{x.score}</td>
                  </tr>
                )
              })}
            </tbody>
          </table>
        </div>
      )}
      {r.winner !== undefined && (
        <p id="why">
          <strong>Why {short(r.winner.provider)} won:</strong> {r.winner.why}
        </p>
      )}
      {r.declines.length > 0 && (
        <>
          <h3>Declines</h3>
          <ul id="declines">
            {r.declines.map((d) => (
              <li>
                <span class="mono">{short(d.provider)}</span>: {d.reasons.join('; ')}
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  )
}
