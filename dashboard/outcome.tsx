/**
 * The money and the proof: the contract (both signatures), the contract-db's proof, the receipt's
 * checks as this requester ran them (signature, outputs hash, usage), the outputs with their
 * hashes and downloads, and the settlement. A job that ended says what happened, never "not yet".
 */
import { FINAL, short, time, type JobView } from './types.js'

/** What each failure code that ends a job before any contract means, in words. */
const NO_CONTRACT: Record<string, string> = {
  NO_BIDS: 'no provider bid',
  NO_PROVIDER_ACCEPTED: 'no bidder took the job request',
  CONTRACT_REFUSED: 'the contract-db refused every contract',
  QUEUE_TIMEOUT: 'no provider had room before the queue timeout',
}

/** Why an ended job has no contract. */
function noContract(job: JobView): string {
  const r = job.record
  if (job.state === 'cancelled') return 'the job was cancelled before a provider was contracted'
  if (r.error === undefined) return 'the job ended first'
  const why = NO_CONTRACT[r.error.code] ?? r.error.code
  return r.declines.length > 0 ? `${why} (${r.declines.length} declined)` : why
}

/** ✓ checked, ✗ failed; while the job is live "not yet", once it ended `ended` (why it never was). */
const mark = (ok: boolean | undefined, ended?: string) =>
  ok === undefined ? (
    <span class="pending">{ended ?? 'not yet'}</span>
  ) : ok ? (
    <span class="ok">✓ checked</span>
  ) : (
    <span class="bad">✗ failed</span>
  )

export function Outcome({ job }: { job: JobView }) {
  const r = job.record
  const v = r.verification
  const invoked = r.history.some((x) => x.state === 'invoking')
  const ended = FINAL.has(job.state)
  // An ended job's check that never ran: no receipt came, or it came and was not checked.
  const unchecked = !ended
    ? undefined
    : r.result === undefined
      ? 'not checked: no receipt came'
      : 'not checked'
  return (
    <div class="grid">
      <section id="contract">
        <h2>Contract and proof</h2>
        {r.contract === undefined ? (
          <p id="no-contract">{ended ? `No contract was made: ${noContract(job)}.` : 'No contract yet.'}</p>
        ) : (
          <dl>
            <dt>Contract</dt>
            <dd class="mono">{r.contract.terms.contractId}</dd>
            <dt>Requester signature</dt>
            <dd>{r.contract.requesterSignature !== '' ? <span class="ok">✓ signed</span> : mark(false)}</dd>
            <dt>Provider signature</dt>
            <dd>
              {r.contract.providerSignature !== undefined ? (
                <span class="ok">✓ signed</span>
              ) : (
                mark(undefined, ended ? 'never signed' : undefined)
              )}
            </dd>
            <dt>Proof (contract-db {short(r.proof?.contractDb)})</dt>
            <dd>
              {r.proof === undefined ? (
                mark(undefined, ended ? 'none: no escrow was locked' : undefined)
              ) : invoked ? (
                <span class="ok">✓ checked before invoking · escrow {r.proof.escrowLocked}</span>
              ) : (
                `escrow ${r.proof.escrowLocked}`
              )}
            </dd>
            <dt>Receipt signature</dt>
            <dd id="receipt-check">{mark(v?.receiptSignatureOk, unchecked)}</dd>
            <dt>Outputs hash</dt>
            <dd id="outputs-check">
              {mark(v?.outputsHashOk, unchecked)} {v?.outputsProblem}
            </dd>
            <dt>Usage claimed</dt>
            <dd>
              {mark(v === undefined ? undefined : v.usageOk !== false, unchecked)} {v?.usageProblem}
            </dd>
          </dl>
        )}
      </section>
      <section id="settlement">
        <h2>Settlement</h2>
        {r.settlement === undefined ? (
          <p id="no-settlement">
            {!ended
              ? 'Not settled yet.'
              : r.contract === undefined
                ? 'Nothing to settle: no contract was made, so no escrow was locked and no money moved.'
                : `Not settled when the job ended: the contract-db has not settled or terminated contract ${short(r.contract.terms.contractId)}.`}
          </p>
        ) : (
          <dl>
            <dt>Outcome</dt>
            <dd>
              {r.settlement.outcome}
              {r.settlement.reason !== undefined ? ` (${r.settlement.reason})` : ''}
            </dd>
            <dt>Paid to provider</dt>
            <dd>{r.settlement.paidToProvider}</dd>
            <dt>Refunded to you</dt>
            <dd>{r.settlement.refundedToRequester}</dd>
            <dt>Billed</dt>
            <dd>{r.settlement.billedSeconds} s</dd>
            <dt>Settled at</dt>
            <dd class="mono">{time(r.settlement.settledAt)}</dd>
          </dl>
        )}
      </section>
      <section id="outputs">
        <h2>Outputs</h2>
        {r.result === undefined || r.result.outputs.length === 0 ? (
          <p>
            {r.result !== undefined
              ? 'No outputs.'
              : ended
                ? 'No outputs: the job ended without a result.'
                : 'No outputs yet.'}
          </p>
        ) : (
          <div class="scroll">
            <table>
              <thead>
                <tr>
                  <th>File</th>
                  <th>Size</th>
                  <th>sha256</th>
                </tr>
              </thead>
              <tbody>
                {r.result.outputs.map((o) => (
                  <tr>
                    <td>
                      <a
                        href={`/v1/jobs/${r.id}/outputs/${o.path.split('/').map(encodeURIComponent).join('/')}`}
                        download
                      >
                        {o.path}
                      </a>
                    </td>
                    <td>{o.size}</td>
                    <td class="mono hash">{o.sha256}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            <p>
              <a href={`/v1/jobs/${r.id}/outputs.tar`} download>
                All outputs (tar)
              </a>
            </p>
          </div>
        )}
      </section>
    </div>
  )
}
