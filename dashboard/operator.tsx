/**
 * The contract-db operator's dashboard (specs/dashboard.md, "The contract-db's page"): the
 * conservation check as a green or red figure, contracts by state, accounts and balances, the
 * approved entities. One read of `GET /v1/contract-db/overview`, read again on each `books`
 * event of the contract-db's own change feed (`GET /v1/events`), one read at a time.
 */
import { render } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import type { Overview } from '../dms/contract-db/web.js'
import { api, signOut } from './api.js'
import { holdFirstPaint, usePainted } from './first-paint.js'
import { short, time } from './types.js'

const STATES = ['active', 'settled', 'terminated', 'claimed', 'expired'] as const
const micro = (n: number | undefined) => (n === undefined ? '-' : n.toLocaleString('en'))
const when = (ms: number) => `${new Date(ms).toISOString().slice(0, 10)} ${time(ms)}`
const Peer = ({ id }: { id: string }) => (
  <span class="mono" title={id}>
    {short(id)}
  </span>
)

/** The overview, read on load and again after each change the stream tells of (never on a timer). */
function useBooks(): { data?: Overview; error?: string } {
  const [state, setState] = useState<{ data?: Overview; error?: string }>({})
  useEffect(() => {
    let running = false
    let again = false
    const load = () => {
      if (running) {
        again = true
        return
      }
      running = true
      api<Overview>('GET', '/v1/contract-db/overview')
        .then((data) => setState({ data }))
        .catch((e: Error) => setState((s) => ({ ...s, error: e.message })))
        .finally(() => {
          running = false
          if (again) {
            again = false
            load()
          }
        })
    }
    const source = new EventSource('/v1/events')
    source.addEventListener('books', load)
    load()
    return () => source.close()
  }, [])
  return state
}

function ConservationFigure({ c }: { c: Overview['conservation'] }) {
  return (
    <section id="conservation" class={c.ok ? 'figure good' : 'figure broken'} data-ok={String(c.ok)}>
      <h2>Conservation</h2>
      <p class="big">
        {c.ok ? '✓' : '✗'} credited {micro(c.credited)} {c.ok ? '=' : '≠'} balances {micro(c.balances)} +
        escrow {micro(c.escrow)}
      </p>
      {!c.ok && (
        <p class="bad" id="conservation-difference">
          The accounts hold {micro(Math.abs(c.difference))} micro-tokens {c.difference > 0 ? 'more' : 'less'}{' '}
          than was ever credited.
        </p>
      )}
      <p class="note">
        Micro-tokens, {c.accounts} accounts. Checked since {when(c.since)}
        {c.initialisedWith > 0 && `, from the ${micro(c.initialisedWith)} the accounts held then`}.
      </p>
    </section>
  )
}

function App({ summary }: { summary: boolean }) {
  const { data, error } = useBooks()
  usePainted(data !== undefined || error !== undefined)
  // The server's summary is on screen meanwhile (first-paint.ts).
  if (data === undefined) return error === undefined && summary ? null : <p>{error ?? 'Loading…'}</p>
  const approved = new Set(data.approved.map((a) => a.peer))
  return (
    <>
      <header>
        <strong>DMS contract-db</strong>
        <nav>
          <Peer id={data.peerId} />
        </nav>
        <button type="button" class="quiet" id="sign-out" onClick={() => void signOut()}>
          Sign out
        </button>
      </header>
      <main id="operator">
        {error !== undefined && <p class="error">{error}</p>}
        <ConservationFigure c={data.conservation} />
        <section>
          <h2>Contracts by state</h2>
          <p id="by-state">
            {STATES.map((s) => (
              <span class={`state s-${s}`} data-state={s} key={s}>
                {s} <b>{data.byState[s] ?? 0}</b>
              </span>
            ))}
          </p>
          <div class="scroll">
            <table id="contracts">
              <thead>
                <tr>
                  <th>contract</th>
                  <th>state</th>
                  <th>requester</th>
                  <th>provider</th>
                  <th>escrow</th>
                  <th>paid</th>
                  <th>refunded</th>
                  <th>activated</th>
                </tr>
              </thead>
              <tbody>
                {data.contracts.map((c) => (
                  <tr key={c.contractId} data-state={c.state}>
                    <td class="mono" title={c.contractId}>
                      {c.contractId.slice(0, 12)}
                    </td>
                    <td>
                      <span class={`state s-${c.state}`}>{c.state}</span>
                      {c.disputedAt !== undefined && <span class="bad"> disputed</span>}
                    </td>
                    <td>
                      <Peer id={c.requester} />
                    </td>
                    <td>
                      <Peer id={c.provider} />
                    </td>
                    <td>{micro(c.escrow)}</td>
                    <td>{micro(c.paidToProvider)}</td>
                    <td>{micro(c.refundedToRequester)}</td>
                    <td>{when(c.activatedAt)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </section>
        <div class="grid">
          <section>
            <h2>Accounts</h2>
            <div class="scroll">
              <table id="accounts">
                <thead>
                  <tr>
                    <th>peer</th>
                    <th>balance</th>
                    <th>escrow</th>
                    <th>approved</th>
                  </tr>
                </thead>
                <tbody>
                  {data.accounts.map((a) => (
                    <tr key={a.peer} data-peer={a.peer}>
                      <td>
                        <Peer id={a.peer} />
                      </td>
                      <td>{micro(a.balance)}</td>
                      <td>{micro(a.escrow)}</td>
                      <td>{approved.has(a.peer) ? 'yes' : 'no'}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </section>
          <section>
            <h2>Approved entities</h2>
            <div class="scroll">
              <table id="approved">
                <thead>
                  <tr>
                    <th>peer</th>
                    <th>roles</th>
                    <th>approved</th>
                  </tr>
                </thead>
                <tbody>
                  {data.approved.map((a) => (
                    <tr key={a.peer} data-peer={a.peer}>
                      <td>
                        <Peer id={a.peer} />
                      </td>
                      <td>{(a.roles ?? ['requester', 'provider']).join(', ')}</td>
                      <td>{when(a.approvedAt)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </section>
        </div>
      </main>
    </>
  )
}

const root = document.getElementById('app') as HTMLElement
render(<App summary={holdFirstPaint(root)} />, root)
