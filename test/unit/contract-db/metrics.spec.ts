/**
 * The contract-db's metrics, counted at the service's events: contracts by state (one read of the
 * store at start), settlements and the money they paid, refusals by a bounded set of codes, and
 * the books' conservation check, which a scrape runs at most once per max age.
 */
import assert from 'node:assert/strict'
import { EventEmitter } from 'node:events'
import { ManualClock } from '../../../actors/clock.js'
import type { ReceiveEvent } from '../../../actors/system.js'
import type { Change } from '../../../dms/contract-db/changes.js'
import type { Conservation } from '../../../dms/contract-db/conservation.js'
import type { ContractDbEvents } from '../../../dms/contract-db/events.js'
import { ContractDbMetrics, type ContractDbSources } from '../../../dms/contract-db/metrics.js'
import type { StoredState } from '../../../dms/contract-db/records.js'

const change = (
  id: string,
  to: StoredState,
  escrow: number,
  settlement?: { paidToProvider: number; refundedToRequester: number },
): Change =>
  ({
    to,
    record: { state: to, contract: { terms: { contractId: id, escrow } }, settlement, history: [] },
    moves: [],
  }) as unknown as Change

const books = (o: Partial<Conservation> = {}): Conservation => ({
  credited: 1000,
  balances: 700,
  escrow: 300,
  difference: 0,
  ok: true,
  since: 0,
  initialisedWith: 0,
  accounts: 2,
  ...o,
})

/** The value of `name{labels}` in `text`, or undefined without that sample. */
function sample(text: string, name: string, labels = ''): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels} `))
  return line === undefined ? undefined : Number(line.split(' ')[1])
}

function setup(stored: Array<{ id: string; state: string }> = []) {
  const clock = new ManualClock()
  const events = new EventEmitter<ContractDbEvents>()
  const observers = new Set<(e: ReceiveEvent) => void>()
  const checks = { n: 0, next: books() }
  const sources: ContractDbSources = {
    clock,
    backend: 'level',
    instance: 'cdb-1',
    events,
    receive: {
      rejections: { bad_signature: 2 },
      late: {},
      observe: (fn) => {
        observers.add(fn)
        return () => observers.delete(fn)
      },
    },
    connectedPeers: () => 3,
    contractStates: () => Promise.resolve(stored),
    conservation: () => {
      checks.n++
      return Promise.resolve(checks.next)
    },
  }
  const metrics = new ContractDbMetrics(sources, { conservationMaxAgeMs: 15_000 })
  return { clock, events, observers, checks, metrics }
}

describe('contract-db metrics', () => {
  it('contracts by state: the stored ones read once at start, then moved at each written change', async () => {
    const { events, metrics } = setup([
      { id: 'a', state: 'active' },
      { id: 'b', state: 'settled' },
    ])
    await metrics.scan()
    let text = await metrics.render()
    assert.equal(sample(text, 'dms_contract_db_contracts', '{state="active"}'), 1)
    assert.equal(sample(text, 'dms_contract_db_contracts', '{state="settled"}'), 1)
    events.emit('contract', change('c', 'active', 500))
    events.emit('contract', change('c', 'active', 500)) // a start note: same state, nothing moves
    events.emit('contract', change('a', 'settled', 200, { paidToProvider: 150, refundedToRequester: 50 }))
    events.emit('contract', change('c', 'expired', 500, { paidToProvider: 0, refundedToRequester: 500 }))
    events.emit('contract', change('c', 'expired', 500)) // a final record stored again
    text = await metrics.render()
    assert.equal(sample(text, 'dms_contract_db_contracts', '{state="active"}'), 0)
    assert.equal(sample(text, 'dms_contract_db_contracts', '{state="settled"}'), 2)
    assert.equal(sample(text, 'dms_contract_db_contracts', '{state="expired"}'), 1)
    assert.equal(sample(text, 'dms_contract_db_settlements_total', '{outcome="settled"}'), 1)
    assert.equal(sample(text, 'dms_contract_db_settlements_total', '{outcome="expired"}'), 1)
    assert.equal(sample(text, 'dms_contract_db_escrow_locked_microtokens_total'), 500)
    assert.equal(sample(text, 'dms_contract_db_paid_microtokens_total', '{to="provider"}'), 150)
    assert.equal(sample(text, 'dms_contract_db_paid_microtokens_total', '{to="requester"}'), 550)
  })

  it('a dispute keeps a claim claimed: counted once', async () => {
    const { events, metrics } = setup([{ id: 'a', state: 'active' }])
    await metrics.scan()
    events.emit('contract', change('a', 'claimed', 100, { paidToProvider: 100, refundedToRequester: 0 }))
    events.emit('contract', change('a', 'claimed', 100, { paidToProvider: 100, refundedToRequester: 0 }))
    const text = await metrics.render()
    assert.equal(sample(text, 'dms_contract_db_contracts', '{state="claimed"}'), 1)
    assert.equal(sample(text, 'dms_contract_db_settlements_total', '{outcome="claimed"}'), 1)
    assert.equal(sample(text, 'dms_contract_db_paid_microtokens_total', '{to="provider"}'), 100)
  })

  it("refusals by request and code; a code that is not ours, or past 64 codes, is 'other'", async () => {
    const { events, metrics } = setup()
    events.emit('refused', 'verify', 'INSUFFICIENT_FUNDS')
    events.emit('refused', 'verify', 'INSUFFICIENT_FUNDS')
    events.emit('refused', 'settle', 'label"} 1\ninjected 2')
    for (let i = 0; i < 100; i++) events.emit('refused', 'funds', `CODE_${i}`)
    const text = await metrics.render()
    assert.equal(
      sample(text, 'dms_contract_db_refusals_total', '{request="verify",code="INSUFFICIENT_FUNDS"}'),
      2,
    )
    assert.equal(sample(text, 'dms_contract_db_refusals_total', '{request="settle",code="other"}'), 1)
    assert.equal(sample(text, 'dms_contract_db_refusals_total', '{request="funds",code="other"}'), 37)
    assert.equal(text.split('\n').filter((l) => l.startsWith('dms_contract_db_refusals_total{')).length, 66)
    assert.doesNotMatch(text, /^injected/m)
  })

  it('credits, rejections seeded and observed, peers, the backend and the instance', async () => {
    const { events, observers, metrics } = setup()
    events.emit('credit', 'peer', 1234)
    for (const fn of observers) fn({ kind: 'rejected', reason: 'bad_signature' })
    for (const fn of observers) fn({ kind: 'late', reason: 'inbox_closed' })
    const text = await metrics.render()
    assert.equal(sample(text, 'dms_contract_db_credits_microtokens_total'), 1234)
    assert.equal(sample(text, 'dms_actor_rejections_total', '{reason="bad_signature"}'), 3)
    assert.equal(sample(text, 'dms_actor_late_total', '{reason="inbox_closed"}'), 1)
    assert.equal(sample(text, 'dms_peers_connected'), 3)
    assert.equal(sample(text, 'dms_contract_db_info', '{backend="level",cdb_instance="cdb-1"}'), 1)
    metrics.stop()
    events.emit('credit', 'peer', 1)
    assert.equal(observers.size, 0)
    assert.equal(sample(await metrics.render(), 'dms_contract_db_credits_microtokens_total'), 1234)
  })

  it('the books: one conservation check per max age, whatever the number of scrapes', async () => {
    const { clock, checks, metrics } = setup()
    let text = await metrics.render()
    await Promise.all([metrics.render(), metrics.render(), metrics.render()])
    assert.equal(checks.n, 1)
    assert.equal(sample(text, 'dms_contract_db_escrow_microtokens'), 300)
    assert.equal(sample(text, 'dms_contract_db_balances_microtokens'), 700)
    assert.equal(sample(text, 'dms_contract_db_credited_microtokens'), 1000)
    assert.equal(sample(text, 'dms_contract_db_accounts'), 2)
    assert.equal(sample(text, 'dms_contract_db_conservation_ok'), 1)
    assert.equal(sample(text, 'dms_contract_db_conservation_checked_timestamp_seconds'), clock.now() / 1000)
    checks.next = books({ balances: 690, difference: -10, ok: false })
    clock.advance(14_999)
    text = await metrics.render()
    assert.equal(checks.n, 1)
    assert.equal(sample(text, 'dms_contract_db_conservation_ok'), 1)
    clock.advance(1)
    text = await metrics.render()
    assert.equal(checks.n, 2)
    assert.equal(sample(text, 'dms_contract_db_conservation_ok'), 0)
    assert.equal(sample(text, 'dms_contract_db_conservation_difference_microtokens'), -10)
    assert.equal(sample(text, 'dms_contract_db_conservation_checked_timestamp_seconds'), clock.now() / 1000)
  })

  it('renders the process runtime metrics after its own', async () => {
    const text = await setup().metrics.render()
    assert.match(text, /^process_resident_memory_bytes \d+/m)
    assert.match(text, /^nodejs_eventloop_lag_seconds /m)
    assert.doesNotMatch(text, /^nodejs_active_handles_total /m)
  })
})
