/**
 * The money and the proof: the contract (both signatures), the contract-db's proof, the receipt's
 * checks as this requester ran them (signature, outputs hash, usage), the outputs with their
 * hashes and downloads, and the settlement.
 */
import { short, time, type JobView } from './types.js'

const mark = (ok: boolean | undefined) =>
  ok === undefined ? (
    <span class="pending">not yet</span>
  ) : ok ? (
    <span class="ok">✓ checked</span>
  ) : (
    <span class="bad">✗ failed</span>
  )

export function Outcome({ job }: { job: JobView }) {
  const r = job.record
  const v = r.verification
  const invoked = r.history.some((x) => x.state === 'invoking')
  return (
    <div class="grid">
      <section id="contract">
        <h2>Contract and proof</h2>
        {r.contract === undefined ? (
          <p>No contract yet.</p>
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
                mark(undefined)
              )}
            </dd>
            <dt>Proof (contract-db {short(r.proof?.contractDb)})</dt>
            <dd>
              {r.proof === undefined ? (
                mark(undefined)
              ) : invoked ? (
                <span class="ok">✓ checked before invoking · escrow {r.proof.escrowLocked}</span>
              ) : (
                `escrow ${r.proof.escrowLocked}`
              )}
            </dd>
            <dt>Receipt signature</dt>
            <dd id="receipt-check">{mark(v?.receiptSignatureOk)}</dd>
            <dt>Outputs hash</dt>
            <dd id="outputs-check">
              {mark(v?.outputsHashOk)} {v?.outputsProblem}
            </dd>
            <dt>Usage claimed</dt>
            <dd>
              {mark(v === undefined ? undefined : v.usageOk !== false)} {v?.usageProblem}
            </dd>
          </dl>
        )}
      </section>
      <section id="settlement">
        <h2>Settlement</h2>
        {r.settlement === undefined ? (
          <p>Not settled yet.</p>
        ) : (
          <dl>
            <dt>Outcome</dt>
            <dd>
              {r.settlement.outcome}
              {r.settlement.reason !== undefined ? ` (${r.settlement.reason})` : ''}
            </dd>
            <dt>Paid to provider</dt>
            <dd>{r.settlement.paidToProvider}</dd>
            <dt>Refunded</dt>
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
          <p>No outputs{r.result === undefined ? ' yet' : ''}.</p>
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
