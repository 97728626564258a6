import assert from 'node:assert/strict'
import { Mailbox, type MailboxInit } from '../../../actors/mailbox.js'

/** A mailbox whose handler records items and blocks on item `blockOn` until `release()`. */
function blockedMailbox(init: MailboxInit, blockOn = 1) {
  const handled: number[] = []
  const errors: Array<[unknown, number]> = []
  let release!: () => void
  const gate = new Promise<void>((r) => (release = r))
  let active = 0
  let maxActive = 0
  const mailbox = new Mailbox<number>(
    async (n) => {
      active++
      maxActive = Math.max(maxActive, active)
      handled.push(n)
      try {
        if (n === blockOn) await gate
        await Promise.resolve()
      } finally {
        active--
      }
    },
    (err, n) => errors.push([err, n]),
    init,
  )
  return { mailbox, handled, errors, release, maxActive: () => maxActive }
}

describe('actors/mailbox', () => {
  it('handles items one at a time, in FIFO order', async () => {
    const fx = blockedMailbox({})
    for (let i = 1; i <= 5; i++) assert.equal(fx.mailbox.push(i), true)
    assert.deepEqual(fx.handled, [1], 'the first item starts at once, the rest wait')
    fx.release()
    await fx.mailbox.idle()
    assert.deepEqual(fx.handled, [1, 2, 3, 4, 5])
    assert.equal(fx.maxActive(), 1)
    assert.deepEqual(fx.mailbox.stats, { length: 0, accepted: 5, dropped: 0, processed: 5, failed: 0 })
  })

  it('drop-newest (the default) refuses new items when full and keeps the queued ones', async () => {
    const fx = blockedMailbox({ capacity: 2 })
    assert.equal(fx.mailbox.push(1), true) // being handled: not in the queue
    assert.equal(fx.mailbox.push(2), true)
    assert.equal(fx.mailbox.push(3), true)
    assert.equal(fx.mailbox.stats.length, 2)
    assert.equal(fx.mailbox.push(4), false)
    assert.equal(fx.mailbox.push(5), false)
    assert.deepEqual(fx.mailbox.stats, { length: 2, accepted: 3, dropped: 2, processed: 0, failed: 0 })
    fx.release()
    await fx.mailbox.idle()
    assert.deepEqual(fx.handled, [1, 2, 3])
    assert.deepEqual(fx.mailbox.stats, { length: 0, accepted: 3, dropped: 2, processed: 3, failed: 0 })
  })

  it('drop-oldest evicts the head of the queue to take the new item', async () => {
    const fx = blockedMailbox({ capacity: 2, overflow: 'drop-oldest' })
    assert.equal(fx.mailbox.push(1), true)
    assert.equal(fx.mailbox.push(2), true)
    assert.equal(fx.mailbox.push(3), true)
    assert.equal(fx.mailbox.push(4), false, 'false: an older item was dropped')
    assert.equal(fx.mailbox.push(5), false)
    assert.deepEqual(fx.mailbox.stats, { length: 2, accepted: 5, dropped: 2, processed: 0, failed: 0 })
    fx.release()
    await fx.mailbox.idle()
    assert.deepEqual(fx.handled, [1, 4, 5])
    assert.equal(fx.mailbox.stats.processed, 3)
  })

  it('defaults to a capacity of 1024', async () => {
    const fx = blockedMailbox({})
    fx.mailbox.push(0)
    for (let i = 1; i <= 1024; i++) assert.equal(fx.mailbox.push(i), true, `item ${i}`)
    assert.equal(fx.mailbox.push(1025), false)
    assert.equal(fx.mailbox.stats.dropped, 1)
    fx.release()
    await fx.mailbox.idle()
    assert.equal(fx.handled.length, 1025)
  })

  it('idle() resolves at once when empty, and only after everything queued is handled', async () => {
    const fx = blockedMailbox({})
    await fx.mailbox.idle() // nothing queued: must not hang
    fx.mailbox.push(1)
    fx.mailbox.push(2)
    let idle = false
    const p = fx.mailbox.idle().then(() => {
      idle = true
      return fx.mailbox.stats.processed
    })
    await Promise.resolve()
    await Promise.resolve()
    assert.equal(idle, false, 'idle while item 1 is still being handled')
    fx.release()
    assert.equal(await p, 2)
    assert.deepEqual(fx.handled, [1, 2])
  })

  it('counts a failing item, reports it with its item, and goes on with the next', async () => {
    const handled: number[] = []
    const errors: Array<[unknown, number]> = []
    const mailbox = new Mailbox<number>(
      (n) => {
        handled.push(n)
        return n === 2 ? Promise.reject(new Error('bad item')) : Promise.resolve()
      },
      (err, n) => errors.push([err, n]),
    )
    for (const n of [1, 2, 3]) mailbox.push(n)
    await mailbox.idle()
    assert.deepEqual(handled, [1, 2, 3])
    assert.equal(errors.length, 1)
    assert.equal(errors[0][1], 2)
    assert.match(String(errors[0][0]), /bad item/)
    assert.equal(mailbox.stats.processed, 2)
    assert.equal(mailbox.stats.failed, 1)
  })

  it('close() drops the queue and refuses later pushes; the item in hand finishes', async () => {
    const fx = blockedMailbox({})
    fx.mailbox.push(1)
    fx.mailbox.push(2)
    fx.mailbox.push(3)
    fx.mailbox.close()
    assert.equal(fx.mailbox.stats.length, 0)
    assert.equal(fx.mailbox.push(4), false)
    fx.release()
    await fx.mailbox.idle()
    assert.deepEqual(fx.handled, [1])
    assert.equal(fx.mailbox.stats.processed, 1)
  })

  it('starts again after going idle', async () => {
    const fx = blockedMailbox({}, -1)
    fx.mailbox.push(1)
    await fx.mailbox.idle()
    fx.mailbox.push(2)
    await fx.mailbox.idle()
    assert.deepEqual(fx.handled, [1, 2])
  })
})
