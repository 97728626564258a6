import assert from 'node:assert/strict'
import { SerialQueue } from '../../../actors/serial.js'

function deferred() {
  let resolve!: () => void
  const promise = new Promise<void>((r) => (resolve = r))
  return { promise, resolve }
}

describe('actors/serial', () => {
  it('runs one task at a time, in the order queued', async () => {
    const q = new SerialQueue()
    const log: string[] = []
    const gate = deferred()
    const a = q.run(async () => {
      log.push('a start')
      await gate.promise
      log.push('a end')
      return 'a'
    })
    const b = q.run(() => {
      log.push('b')
      return 'b'
    })
    await new Promise((r) => setImmediate(r))
    assert.deepEqual(log, ['a start'], 'b waits for a')
    gate.resolve()
    assert.deepEqual(await Promise.all([a, b]), ['a', 'b'])
    assert.deepEqual(log, ['a start', 'a end', 'b'])
  })

  it('a failed task rejects its own caller only; the next ones still run', async () => {
    const q = new SerialQueue()
    const failed = q.run(() => Promise.reject(new Error('boom')))
    const next = q.run(() => 'still runs')
    await assert.rejects(failed, /boom/)
    assert.equal(await next, 'still runs')
  })

  it('idle() resolves once everything queued so far has settled', async () => {
    const q = new SerialQueue()
    const gate = deferred()
    let done = false
    void q.run(async () => {
      await gate.promise
      done = true
    })
    const idle = q.idle()
    gate.resolve()
    await idle
    assert.equal(done, true)
  })
})
