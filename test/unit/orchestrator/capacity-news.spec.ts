/**
 * Capacity news at the requester: the board wakes the oldest queued jobs that fit in what a
 * provider announced, together no more than that; the listener keeps news only from the peer that
 * signed it, with its approval credential from this requester's contract-db, at most one per peer
 * per NEWS_MIN_GAP_MS.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ManualClock } from '../../../actors/clock.js'
import type { Message } from '../../../actors/system.js'
import { issueApproval } from '../../../dms/contracts/approval.js'
import { silentLogger } from '../../../dms/log.js'
import { CapacityBoard } from '../../../dms/orchestrator/capacity-board.js'
import { CapacityNewsListener, NEWS_MIN_GAP_MS } from '../../../dms/orchestrator/capacity-news.js'
import { CAPACITY_TOPIC } from '../../../dms/protocol/handles.js'
import { openDb, type Db } from '../../../dms/store/db.js'
import type { CapacityNews } from '../../../dms/protocol/messages.js'
import { newParty } from '../../helpers/contracts.js'

const GiB = 1024 ** 3
const res = (cpu: number, diskBytes = 0) => ({ cpu, memoryBytes: GiB / 4, diskBytes, gpus: 0 })
const free = (cpu: number) => ({ cpu, memoryBytes: GiB, diskBytes: GiB, gpus: 0 })

describe('orchestrator/capacity-board', () => {
  it('wakes the oldest jobs that fit, together no more than the announced room', async () => {
    const board = new CapacityBoard()
    const never = new AbortController().signal
    const woken: string[] = []
    const wait = (id: string, cpu: number, disk = 0) =>
      void board.wait(id, res(cpu, disk), never).then((by) => woken.push(`${id} by ${by}`))
    wait('a', 1)
    wait('b', 0.5)
    wait('c', 0.5)
    wait('d', 0.25)
    wait('e', 0.1, 2 * GiB)
    assert.equal(board.announce('P1', free(1)), 1, 'a takes the whole core')
    assert.equal(board.announce('P2', free(0.75)), 2, 'b, then d fits in what is left; c does not')
    await Promise.resolve()
    assert.deepEqual(woken, ['a by capacity P1', 'b by capacity P2', 'd by capacity P2'])
    assert.equal(board.size, 2)
    assert.equal(board.announce('P3', free(0.4)), 0, 'c needs 0.5; e asks for more disk than is free')
    assert.equal(board.woken, 3)
  })

  it('a job waits once: waiting again moves it to the back', () => {
    const board = new CapacityBoard()
    const never = new AbortController().signal
    const order: string[] = []
    void board.wait('a', res(1), never).then(() => order.push('a-first'))
    void board.wait('b', res(1), never).then(() => order.push('b'))
    void board.wait('a', res(1), never).then(() => order.push('a'))
    assert.equal(board.size, 2)
    board.announce('P', free(1))
    return Promise.resolve().then(() => assert.deepEqual(order, ['b']))
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
    const clock = new ManualClock(1_000_000)
    const board = new CapacityBoard()
    const listener = new CapacityNewsListener({
      system: { spawn: () => assert.fail('not started in this test') },
      key: requester.key,
      clock,
      log: silentLogger,
      board,
      contractDb: cdb.peer,
      db,
    })
    const woken: string[] = []
    void board.wait('j1', res(0.5), new AbortController().signal).then((by) => woken.push(by))
    void board.wait('j2', res(0.5), new AbortController().signal).then((by) => woken.push(by))
    return { clock, board, listener, woken }
  }
  const msg = (payload: CapacityNews, peer = provider.peer) => ({ payload, peer }) as Message<CapacityNews>
  const news = (clock: ManualClock, over: Partial<CapacityNews> = {}): CapacityNews => ({
    provider: provider.peer,
    free: free(0.5),
    at: clock.now(),
    approval: issueApproval(cdb.key, { peer: provider.peer, contractDb: cdb.peer, now: clock.now() }),
    ...over,
  })

  it('keeps approved news from its signer and wakes a job that fits', async () => {
    const { clock, listener, woken, board } = setup()
    assert.equal(listener.receive(msg(news(clock))), undefined)
    await Promise.resolve()
    assert.deepEqual(woken, [`capacity ${provider.peer}`])
    assert.equal(board.size, 1)
    assert.deepEqual(listener.counts, { kept: 1 })
  })

  it('ignores news signed by another peer, without or with a foreign credential, and floods', () => {
    const { clock, listener, board } = setup()
    const other = newParty()
    assert.equal(listener.receive(msg(news(clock), other.peer)), 'other_signer')
    assert.equal(listener.receive(msg(news(clock, { approval: undefined }))), 'no_approval')
    const foreign = issueApproval(other.key, {
      peer: provider.peer,
      contractDb: other.peer,
      now: clock.now(),
    })
    assert.equal(listener.receive(msg(news(clock, { approval: foreign }))), 'approval_other_contract_db')
    assert.equal(board.size, 2, 'nothing woken')
    assert.equal(listener.receive(msg(news(clock))), undefined)
    clock.advance(NEWS_MIN_GAP_MS - 1)
    assert.equal(listener.receive(msg(news(clock))), 'rate_limited')
    clock.advance(1)
    assert.equal(listener.receive(msg(news(clock))), undefined)
    assert.deepEqual(listener.counts, {
      other_signer: 1,
      no_approval: 1,
      approval_other_contract_db: 1,
      rate_limited: 1,
      kept: 2,
    })
  })

  it('a credential verified once is still refused when its fields are altered or it expired', () => {
    const { clock, listener } = setup()
    const cred = issueApproval(cdb.key, { peer: provider.peer, contractDb: cdb.peer, now: clock.now() })
    assert.equal(listener.receive(msg(news(clock, { approval: cred }))), undefined)
    clock.advance(NEWS_MIN_GAP_MS)
    const stretched = { ...cred, expiresAt: cred.expiresAt + 3_600_000 }
    assert.equal(listener.receive(msg(news(clock, { approval: stretched }))), 'approval_forged')
    clock.advance(cred.expiresAt - clock.now())
    assert.equal(listener.receive(msg(news(clock, { approval: cred }))), 'approval_expired')
  })

  it('an opt-out leaves the topic at once and is kept across a restart; an opt-in listens again', async () => {
    const spawned: string[] = []
    const stopped: string[] = []
    const left: string[] = []
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
        },
        key: requester.key,
        clock: new ManualClock(),
        log: silentLogger,
        board: new CapacityBoard(),
        contractDb: cdb.peer,
        db,
        unsubscribe: (topic) => left.push(topic),
      })
    const first = make()
    await first.start()
    assert.equal(first.listening, true, 'listens by default')
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
