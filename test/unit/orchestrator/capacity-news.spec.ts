/**
 * Capacity news at the requester: the board wakes the oldest queued jobs that fit in what a
 * provider announced, together no more than that, and no more than the provider's credit (a peer
 * that announces room and never bids soon wakes nothing; the same news twice wakes nothing); the
 * topic's gate lets news travel only from the peer that signed it, with its approval credential
 * with role `provider` from this requester's contract-db, at most one per origin per
 * NEWS_MIN_GAP_MS, its cheap checks before the credential's signature; the listener keeps only
 * news that came through the gate.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ManualClock } from '../../../actors/clock.js'
import type { Message } from '../../../actors/system.js'
import { checkApproval, issueApproval } from '../../../dms/contracts/approval.js'
import type { Role } from '../../../dms/contracts/model.js'
import { silentLogger } from '../../../dms/log.js'
import { CapacityBoard } from '../../../dms/orchestrator/capacity-board.js'
import { CapacityNewsGate } from '../../../dms/orchestrator/capacity-news-gate.js'
import { CapacityNewsListener, NEWS_MIN_GAP_MS } from '../../../dms/orchestrator/capacity-news.js'
import { Wakers } from '../../../dms/orchestrator/wakers.js'
import { W } from '../../../dms/protocol/behaviours.js'
import { CAPACITY_TOPIC } from '../../../dms/protocol/handles.js'
import { openDb, type Db } from '../../../dms/store/db.js'
import type { CapacityNews } from '../../../dms/protocol/messages.js'
import { newParty } from '../../helpers/contracts.js'

const GiB = 1024 ** 3
const T0 = 1_000_000
const UNTIL = T0 + 600_000
const res = (cpu: number, diskBytes = 0) => ({ cpu, memoryBytes: GiB / 4, diskBytes, gpus: 0 })
const free = (cpu: number) => ({ cpu, memoryBytes: GiB, diskBytes: GiB, gpus: 0 })
const never = new AbortController().signal

function board(init?: ConstructorParameters<typeof Wakers>[1]) {
  const clock = new ManualClock(T0)
  const b = new CapacityBoard(new Wakers(clock, init))
  const woken: string[] = []
  const wait = (id: string, cpu: number, disk = 0) =>
    void b.wait(id, res(cpu, disk), never).then((by) => woken.push(`${id} by ${by}`))
  return { clock, board: b, woken, wait }
}

describe('orchestrator/capacity-board', () => {
  it('wakes the oldest jobs that fit, together no more than the announced room', async () => {
    const { board: b, woken, wait } = board()
    wait('a', 1)
    wait('b', 0.5)
    wait('c', 0.5)
    wait('d', 0.25)
    wait('e', 0.1, 2 * GiB)
    assert.equal(b.announce('P1', free(1), UNTIL), 1, 'a takes the whole core')
    assert.equal(b.announce('P2', free(0.75), UNTIL), 2, 'b, then d fits in what is left; c does not')
    await Promise.resolve()
    assert.deepEqual(woken, ['a by capacity P1', 'b by capacity P2', 'd by capacity P2'])
    assert.equal(b.size, 2)
    assert.equal(b.announce('P3', free(0.4), UNTIL), 0, 'c needs 0.5; e asks for more disk than is free')
    assert.equal(b.woken, 3)
  })

  it('a job waits once: waiting again moves it to the back', () => {
    const { board: b } = board()
    const order: string[] = []
    void b.wait('a', res(1), never).then(() => order.push('a-first'))
    void b.wait('b', res(1), never).then(() => order.push('b'))
    void b.wait('a', res(1), never).then(() => order.push('a'))
    assert.equal(b.size, 2)
    b.announce('P', free(1), UNTIL)
    return Promise.resolve().then(() => assert.deepEqual(order, ['b']))
  })

  it('a peer announcing 1000 free cores and never bidding wakes its credit once, then nothing; the same news twice wakes nothing', async () => {
    const { board: b, woken, wait } = board({ start: 3 })
    for (let i = 0; i < 10; i++) wait(`j${i}`, 1)
    assert.equal(b.announce('Liar', free(1000), UNTIL), 3, 'the whole queue fits, but only its credit wakes')
    await Promise.resolve()
    // The woken jobs find no bid from it and wait again (at the back).
    for (let i = 0; i < 3; i++) wait(`j${i}`, 1)
    assert.equal(b.announce('Liar', free(1000), UNTIL), 0, 'the same news again')
    for (let cpu = 999; cpu > 990; cpu--)
      assert.equal(b.announce('Liar', free(cpu), UNTIL), 0, 'no credit left')
    assert.deepEqual(b.unheeded, { repeated: 1, no_credit: 9 })
    assert.equal(woken.length, 3)
    assert.equal(b.size, 10)
  })

  it("a provider's bids earn its credit back: an honest provider keeps waking what it announced", async () => {
    const { board: b, woken, wait } = board({ start: 1, max: 2 })
    for (let i = 0; i < 4; i++) wait(`j${i}`, 1)
    assert.equal(b.announce('P', free(1), UNTIL), 1)
    assert.equal(b.announce('P', free(2), UNTIL), 0, 'credit spent')
    b.wakers.bid('P', UNTIL) // its bid for the job it woke
    assert.equal(b.announce('P', free(2), UNTIL), 1, 'one earned back: one more, though two fit')
    b.wakers.bid('P', UNTIL)
    b.wakers.bid('P', UNTIL)
    b.wakers.bid('P', UNTIL)
    assert.equal(
      b.announce('P', free(2), UNTIL),
      2,
      'the same free as before, but it bid since; credit capped at 2',
    )
    await Promise.resolve()
    assert.deepEqual(woken, ['j0 by capacity P', 'j1 by capacity P', 'j2 by capacity P', 'j3 by capacity P'])
  })

  it('a join wakes the oldest only for an approved provider with credit; a stranger or an expired credential wakes nothing', async () => {
    const { clock, board: b, woken, wait } = board({ start: 2 })
    for (let i = 0; i < 4; i++) wait(`j${i}`, 8)
    assert.equal(b.joined('Stranger', 32), 0)
    b.wakers.approved('P', clock.now() + 1000)
    assert.equal(b.joined('P', 32), 2, 'its credit, though 32 could')
    assert.equal(b.joined('P', 32), 0)
    b.wakers.approved('Q', clock.now() + 1000)
    clock.advance(1000)
    assert.equal(b.joined('Q', 32), 0, 'its credential expired')
    await Promise.resolve()
    assert.deepEqual(woken, ['j0 by joined P', 'j1 by joined P'])
    assert.deepEqual(b.unheeded, { no_credit: 1 })
  })
})

describe('orchestrator/capacity-news gate', () => {
  const cdb = newParty()
  const provider = newParty()
  const setup = () => {
    const clock = new ManualClock(T0)
    const counts: Record<string, number> = {}
    let verified = 0
    const gate = new CapacityNewsGate({ clock, log: silentLogger, counts }, cdb.peer, (cred, want, opts) => {
      if (opts?.signatureChecked !== true) verified++
      return checkApproval(cred, want, opts)
    })
    return { clock, gate, counts, verified: () => verified }
  }
  const approval = (clock: ManualClock, roles?: Role[]) =>
    issueApproval(cdb.key, { peer: provider.peer, contractDb: cdb.peer, now: clock.now(), roles })
  const msg = (payload: CapacityNews, peer = provider.peer, behaviour = W.capacityNews.name) =>
    ({ behaviour, payload, peer, via: 'gossip' }) as Message<CapacityNews>
  const news = (clock: ManualClock, over: Partial<CapacityNews> = {}): CapacityNews => ({
    provider: provider.peer,
    free: free(0.5),
    at: clock.now(),
    approval: approval(clock),
    ...over,
  })

  it('lets through approved news from its signer, at most one per NEWS_MIN_GAP_MS per origin', () => {
    const { clock, gate, counts } = setup()
    assert.equal(gate.admission(msg(news(clock))), 'accept')
    clock.advance(NEWS_MIN_GAP_MS - 1)
    assert.equal(
      gate.admission(msg(news(clock))),
      'reject',
      'over the rate: rejected, its sender scored down',
    )
    clock.advance(1)
    assert.equal(gate.admission(msg(news(clock))), 'accept')
    assert.deepEqual(counts, { rate_limited: 1 })
  })

  it('rejects news signed by another peer, without a credential, forged, foreign, role-less or not news', () => {
    const { clock, gate, counts } = setup()
    const other = newParty()
    assert.equal(gate.admission(msg(news(clock), other.peer)), 'reject')
    assert.equal(gate.admission(msg(news(clock, { approval: undefined }))), 'reject')
    const good = approval(clock)
    assert.equal(
      gate.admission(
        msg(
          news(clock, {
            approval: { ...good, signature: good.signature.replace(/^./, (c) => (c === 'A' ? 'B' : 'A')) },
          }),
        ),
      ),
      'reject',
    )
    const foreign = issueApproval(other.key, {
      peer: provider.peer,
      contractDb: other.peer,
      now: clock.now(),
    })
    assert.equal(gate.admission(msg(news(clock, { approval: foreign }))), 'reject')
    assert.equal(gate.admission(msg(news(clock, { approval: approval(clock, ['requester']) }))), 'reject')
    assert.equal(gate.admission(msg(news(clock), provider.peer, W.bidRequest.name)), 'reject')
    assert.deepEqual(counts, {
      other_signer: 1,
      no_approval: 1,
      approval_forged: 1,
      approval_other_contract_db: 1,
      approval_role: 1,
      not_news: 1,
    })
  })

  it('checks the cheap things before the signature, and verifies a credential once', () => {
    const { clock, gate, counts, verified } = setup()
    const good = approval(clock)
    const forged = { ...good, signature: good.signature.replace(/^./, (c) => (c === 'A' ? 'B' : 'A')) }
    const expired = { ...forged, issuedAt: T0 - 700_000, expiresAt: T0 - 100_000 }
    assert.equal(gate.admission(msg(news(clock, { approval: expired }))), 'reject')
    assert.equal(gate.admission(msg(news(clock, { approval: { ...forged, roles: ['relay'] } }))), 'reject')
    assert.equal(verified(), 0, 'expired and role-less: refused on their fields, no signature checked')
    assert.equal(gate.admission(msg(news(clock, { approval: good }))), 'accept')
    for (let i = 0; i < 5; i++) assert.equal(gate.admission(msg(news(clock, { approval: forged }))), 'reject')
    assert.equal(verified(), 1, 'over the rate: refused before its signature is checked')
    for (let i = 0; i < 3; i++) {
      clock.advance(NEWS_MIN_GAP_MS)
      assert.equal(gate.admission(msg(news(clock, { approval: good }))), 'accept')
    }
    assert.equal(verified(), 1, 'a good credential is verified once')
    assert.deepEqual(counts, { approval_expired: 1, approval_role: 1, rate_limited: 5 })
  })
})

describe('orchestrator/capacity-news listener', () => {
  const cdb = newParty()
  const provider = newParty()
  const requester = newParty()
  let dir: string
  let db: Db
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dms-capnews-'))
    db = await openDb(join(dir, 'db'))
  })
  after(async () => {
    await db.close()
    await rm(dir, { recursive: true, force: true })
  })

  const setup = () => {
    const clock = new ManualClock(T0)
    const board = new CapacityBoard(new Wakers(clock))
    const listener = new CapacityNewsListener({
      system: { spawn: () => assert.fail('not started in this test'), admit: () => undefined },
      key: requester.key,
      clock,
      log: silentLogger,
      board,
      contractDb: cdb.peer,
      db,
    })
    const woken: string[] = []
    void board.wait('j1', res(0.5), never).then((by) => woken.push(by))
    void board.wait('j2', res(0.5), never).then((by) => woken.push(by))
    return { clock, board, listener, woken }
  }
  const msg = (payload: CapacityNews, via: 'gossip' | 'direct' = 'gossip') =>
    ({ behaviour: W.capacityNews.name, payload, peer: provider.peer, via }) as Message<CapacityNews>
  const news = (clock: ManualClock, over: Partial<CapacityNews> = {}): CapacityNews => ({
    provider: provider.peer,
    free: free(0.5),
    at: clock.now(),
    approval: issueApproval(cdb.key, { peer: provider.peer, contractDb: cdb.peer, now: clock.now() }),
    ...over,
  })

  it('keeps news that came through the gate and wakes a job that fits; its sender is then a known provider', async () => {
    const { clock, listener, woken, board } = setup()
    const n = news(clock)
    assert.equal(listener.gate.admission(msg(n)), 'accept')
    assert.equal(listener.receive(msg(n)), undefined)
    await Promise.resolve()
    assert.deepEqual(woken, [`capacity ${provider.peer}`])
    assert.equal(board.size, 1)
    assert.equal(board.wakers.isApproved(provider.peer), true)
    assert.deepEqual(listener.counts, { kept: 1 })
  })

  it('ignores news sent directly to its inbox: it never went through the gate', () => {
    const { clock, listener, board } = setup()
    assert.equal(listener.receive(msg(news(clock), 'direct')), 'direct')
    assert.equal(board.size, 2, 'nothing woken')
    assert.equal(board.wakers.isApproved(provider.peer), false)
  })

  it('a credential verified once is still refused when its fields are altered or it expired', () => {
    const { clock, listener } = setup()
    const cred = issueApproval(cdb.key, { peer: provider.peer, contractDb: cdb.peer, now: clock.now() })
    assert.equal(listener.gate.admission(msg(news(clock, { approval: cred }))), 'accept')
    clock.advance(NEWS_MIN_GAP_MS)
    const stretched = { ...cred, expiresAt: cred.expiresAt + 3_600_000 }
    assert.equal(listener.gate.admission(msg(news(clock, { approval: stretched }))), 'reject')
    clock.advance(cred.expiresAt - clock.now())
    assert.equal(listener.gate.admission(msg(news(clock, { approval: cred }))), 'reject')
    assert.deepEqual(listener.counts, { approval_forged: 1, approval_expired: 1 })
  })

  it('an opt-out leaves the topic at once and is kept across a restart; an opt-in listens again', async () => {
    const spawned: string[] = []
    const stopped: string[] = []
    const left: string[] = []
    const admitted: string[] = []
    const make = () =>
      new CapacityNewsListener({
        system: {
          spawn: (inbox: string) => {
            spawned.push(inbox)
            const actor = {
              subscribe: (topic: string) => (assert.equal(topic, CAPACITY_TOPIC), actor),
              on: () => actor,
              stop: () => stopped.push(inbox),
            }
            return actor as never
          },
          admit: (topic: string) => void admitted.push(topic),
        },
        key: requester.key,
        clock: new ManualClock(),
        log: silentLogger,
        board: new CapacityBoard(new Wakers(new ManualClock())),
        contractDb: cdb.peer,
        db,
        unsubscribe: (topic) => left.push(topic),
      })
    const first = make()
    await first.start()
    assert.equal(first.listening, true, 'listens by default')
    assert.deepEqual(
      admitted,
      [CAPACITY_TOPIC],
      'news is judged by the gate before it is delivered or forwarded',
    )
    await first.listen(false)
    assert.equal(first.listening, false)
    assert.deepEqual(left, [CAPACITY_TOPIC], 'the gossip subscription is left, not only the actor')
    assert.equal(stopped.length, 1)
    first.stop()

    const restarted = make()
    await restarted.start()
    assert.equal(restarted.listening, false, 'the opt-out was stored')
    assert.equal(spawned.length, 1)
    await restarted.listen(true)
    assert.equal(restarted.listening, true)
    assert.equal(spawned.length, 2)
    restarted.stop()
    const again = make()
    await again.start()
    assert.equal(again.listening, true, 'the opt-in was stored')
    again.stop()
  })
})
