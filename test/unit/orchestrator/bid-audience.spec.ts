/**
 * Who a bid window waits for (dms/orchestrator/bid-audience.ts), on a simulated clock: early close
 * when the audience has answered, the straggler bound, learning silent peers, and waitForWindow's
 * timer re-arming.
 */
import assert from 'node:assert/strict'
import {
  BidAudience,
  waitForWindow,
  type AnswerSource,
  type WindowSummary,
} from '../../../dms/orchestrator/bid-audience.js'
import { ManualClock } from '../../../actors/clock.js'

const WINDOW = 3000
const STRAGGLER = 500

describe('bid audience: who a bid window waits for', () => {
  let clock: ManualClock
  let audience: BidAudience
  let closed: WindowSummary[]

  beforeEach(() => {
    clock = new ManualClock()
    audience = new BidAudience({ silentAfter: 3, stragglerMs: STRAGGLER })
    closed = []
    audience.observe((s) => closed.push(s))
  })

  const open = (subscribers: string[], o: { exclude?: string[]; enoughBids?: number } = {}) =>
    audience.open({
      subscribers,
      exclude: o.exclude,
      openedAt: clock.now(),
      deadline: clock.now() + WINDOW,
      enoughBids: o.enoughBids ?? 3,
    })

  /** One window where `answering` decline at +10 ms and the rest stay silent; returns how it closed. */
  const round = (subscribers: string[], answering: string[], exclude?: string[]): WindowSummary => {
    const w = open(subscribers, { exclude })
    clock.advance(10)
    for (const p of answering) w.answer(p, 'decline', clock.now())
    const at = w.closedBy(clock.now()) === undefined ? w.closesAt() : clock.now()
    clock.advance(at - clock.now())
    assert.notEqual(w.closedBy(clock.now()), undefined)
    return w.close(clock.now())
  }

  it('closes as soon as every provider in the audience has answered', () => {
    const w = open(['a', 'b'])
    w.answer('a', 'decline', clock.now())
    assert.equal(w.closedBy(clock.now()), undefined)
    w.answer('b', 'bid', clock.now())
    assert.equal(w.closedBy(clock.now()), 'all_answered')
    assert.equal(w.close(clock.now()).reason, 'all_answered')
  })

  it('closes at enoughBids bids, without counting the slower ones as silent', () => {
    const w = open(['a', 'b', 'c'], { enoughBids: 2 })
    w.answer('a', 'bid', clock.now())
    w.answer('b', 'bid', clock.now())
    const s = w.close(clock.now())
    assert.equal(s.reason, 'enough_bids')
    for (let i = 0; i < 5; i++) round(['a', 'b', 'c'], ['a', 'b'])
    // c only missed the five full rounds, not the one that closed on enough bids.
    assert.deepEqual(audience.silentPeers(), ['c'])
  })

  it('a provider that never answers holds a window at most stragglerMs after the first answer', () => {
    const w = open(['honest', 'silent'])
    clock.advance(20)
    w.answer('honest', 'decline', clock.now())
    assert.equal(w.closesAt(), clock.now() + STRAGGLER)
    clock.advance(STRAGGLER - 1)
    assert.equal(w.closedBy(clock.now()), undefined)
    clock.advance(1)
    assert.equal(w.closedBy(clock.now()), 'stragglers')
    const s = w.close(clock.now())
    assert.equal(s.closedAt - s.openedAt, 20 + STRAGGLER, 'not the full window')
  })

  it('learns who never answers: after silentAfter requests it is no longer waited for', () => {
    const subs = ['honest', 'silent']
    const reasons = [1, 2, 3].map(() => round(subs, ['honest']).reason)
    assert.deepEqual(reasons, ['stragglers', 'stragglers', 'stragglers'])
    assert.deepEqual(closed[2].silent, ['silent'])
    assert.deepEqual(audience.silentPeers(), ['silent'])
    const w = open(subs)
    assert.deepEqual([...w.audience], ['honest'])
    assert.deepEqual([...w.asked], ['honest', 'silent'], 'still asked: the request is a broadcast')
    w.answer('honest', 'decline', clock.now())
    assert.equal(w.closedBy(clock.now()), 'all_answered', 'closes at once, not after the straggler bound')
  })

  it('a silent provider that answers again is waited for again', () => {
    for (let i = 0; i < 3; i++) round(['honest', 'late'], ['honest'])
    assert.ok(audience.isSilent('late'))
    // Its answer still counts while it is out of the audience, and brings it back.
    const s = round(['honest', 'late'], ['honest', 'late'])
    assert.equal(s.answered, 2)
    assert.equal(audience.isSilent('late'), false)
    assert.deepEqual([...open(['honest', 'late']).audience], ['honest', 'late'])
  })

  it('a window nobody answers runs to its deadline and counts a miss for every provider asked', () => {
    const s = round(['a', 'b'], [])
    assert.equal(s.reason, 'deadline')
    assert.equal(s.closedAt - s.openedAt, WINDOW)
    round(['a', 'b'], [])
    round(['a', 'b'], [])
    assert.deepEqual(audience.silentPeers().sort(), ['a', 'b'])
    // With only silent subscribers there is nobody to close early for: the deadline (or the
    // straggler bound, once an answer comes) closes the window.
    const w = open(['a', 'b'])
    assert.equal(w.audience.size, 0)
    assert.equal(w.closedBy(clock.now()), undefined)
    assert.equal(w.waitingForSome, false)
  })

  it("excluded providers are neither waited for nor counted silent (the job's deny list, faulted ones)", () => {
    const w = open(['a', 'denied'], { exclude: ['denied'] })
    assert.deepEqual([...w.asked], ['a'])
    w.answer('a', 'decline', clock.now())
    assert.equal(w.closedBy(clock.now()), 'all_answered')
    for (let i = 0; i < 5; i++) round(['a', 'denied'], ['a'], ['denied'])
    assert.equal(audience.isSilent('denied'), false)
  })

  it('remembers at most maxTracked peers (the least recently seen are forgotten first)', () => {
    const small = new BidAudience({ silentAfter: 1, stragglerMs: STRAGGLER, maxTracked: 2 })
    for (const p of ['p1', 'p2', 'p3']) {
      const w = small.open({ subscribers: [p], openedAt: 0, deadline: 10, enoughBids: 3 })
      w.close(10)
    }
    assert.deepEqual(small.silentPeers(), ['p2', 'p3'])
  })

  it('close is idempotent and later answers are ignored', () => {
    const w = open(['a'])
    clock.advance(WINDOW)
    const first = w.close(clock.now())
    w.answer('a', 'bid', clock.now())
    assert.equal(w.close(clock.now() + 5), first)
    assert.equal(closed.length, 1)
    assert.equal(audience.isSilent('a'), false, 'one miss only')
  })
})

describe('waitForWindow: re-arms its timer when the closing time moves', () => {
  /** The job session's arrival side, over the manual clock. */
  class Answers implements AnswerSource {
    readonly bids: Array<{ provider: string }> = []
    readonly declines: Array<{ provider: string }> = []
    private waiters: Array<() => void> = []
    constructor(private readonly clock: ManualClock) {}

    until(ready: () => boolean, timeoutMs: number): Promise<boolean> {
      return new Promise((resolve) => {
        const finish = (v: boolean) => {
          this.clock.clearTimeout(timer)
          this.waiters = this.waiters.filter((w) => w !== check)
          resolve(v)
        }
        const check = () => {
          if (ready()) finish(true)
        }
        const timer = this.clock.setTimeout(() => finish(ready()), timeoutMs)
        this.waiters.push(check)
        check()
      })
    }

    decline(provider: string): void {
      this.declines.push({ provider })
      for (const w of [...this.waiters]) w()
    }
  }

  it('closes stragglerMs after the first answer, not at the deadline it first armed for', async () => {
    const clock = new ManualClock()
    const audience = new BidAudience({ stragglerMs: STRAGGLER })
    const w = audience.open({
      subscribers: ['honest', 'silent'],
      openedAt: clock.now(),
      deadline: clock.now() + WINDOW,
      enoughBids: 3,
    })
    const answers = new Answers(clock)
    let done = false
    const waiting = waitForWindow(w, answers, clock, new AbortController().signal).then(() => (done = true))
    await clock.scheduled(WINDOW)
    clock.advance(100)
    answers.decline('honest')
    await clock.scheduled(STRAGGLER)
    clock.advance(STRAGGLER - 1)
    await Promise.resolve()
    assert.equal(done, false)
    clock.advance(1)
    await waiting
    assert.equal(w.close(clock.now()).reason, 'stragglers')
    assert.equal(clock.now() - w.openedAt, 100 + STRAGGLER)
  })
})
