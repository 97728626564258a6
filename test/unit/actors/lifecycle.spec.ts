import assert from 'node:assert/strict'
import { Lifecycle, type PartFactory } from '../../../actors/lifecycle.js'

describe('actors/lifecycle', () => {
  it('stops parts in reverse order of starting, once, and reports its status', async () => {
    const log: string[] = []
    const lc = new Lifecycle()
    assert.equal(lc.status, 'stopped')
    const start = () =>
      lc.start(async () => {
        for (const part of ['db', 'host', 'api']) {
          log.push(`start ${part}`)
          lc.onStop(() => void log.push(`stop ${part}`), part)
        }
        await Promise.resolve()
      })
    await Promise.all([start(), start()])
    await start()
    assert.equal(lc.status, 'started')
    await Promise.all([lc.stop(), lc.stop()])
    await lc.stop()
    assert.equal(lc.status, 'stopped')
    assert.deepEqual(log, ['start db', 'start host', 'start api', 'stop api', 'stop host', 'stop db'])
  })

  it('a failed start stops exactly what it had started, then rethrows', async () => {
    const log: string[] = []
    const lc = new Lifecycle()
    await assert.rejects(
      lc.start(async () => {
        lc.onStop(() => void log.push('stop db'))
        await Promise.resolve()
        lc.onStop(() => void log.push('stop host'))
        throw new Error('api cannot listen')
      }),
      /api cannot listen/,
    )
    assert.deepEqual(log, ['stop host', 'stop db'])
    assert.equal(lc.status, 'stopped')
  })

  it('a stop that throws is reported, and the parts below it still stop', async () => {
    const log: string[] = []
    const reported: Array<string | undefined> = []
    const lc = new Lifecycle((_err, part) => reported.push(part))
    await lc.start(async () => {
      lc.onStop(() => void log.push('stop db'), 'db')
      lc.onStop(() => Promise.reject(new Error('stuck')), 'host')
      await Promise.resolve()
    })
    await lc.stop()
    assert.deepEqual(reported, ['host'])
    assert.deepEqual(log, ['stop db'])
  })

  it('a stop during a start waits for it, then stops what it started; it can start again', async () => {
    const log: string[] = []
    const lc = new Lifecycle()
    let release!: () => void
    const starting = lc.start(async () => {
      lc.onStop(() => void log.push('stop a'))
      await new Promise<void>((r) => (release = r))
      lc.onStop(() => void log.push('stop b'))
    })
    assert.equal(lc.status, 'starting')
    const stopping = lc.stop()
    release()
    await starting
    await stopping
    assert.deepEqual(log, ['stop b', 'stop a'])
    await lc.start(async () => {
      lc.onStop(() => void log.push('stop c'))
      await Promise.resolve()
    })
    assert.equal(lc.status, 'started')
  })

  describe('a list of parts', () => {
    interface Fake {
      log: string[]
      db?: string
    }
    /** A fake part that logs its start and stop; `fail` makes its start throw. */
    const part =
      (
        name: string,
        opts: { fail?: boolean; provides?: Partial<Fake>; absent?: boolean } = {},
      ): PartFactory<Fake> =>
      (c) =>
        opts.absent === true
          ? undefined
          : {
              name,
              provides: opts.provides,
              start: async () => {
                await Promise.resolve()
                if (opts.fail === true) throw new Error(`${name} cannot start`)
                c.log.push(`start ${name}${c.db !== undefined ? ` over ${c.db}` : ''}`)
              },
              stop: () => Promise.resolve(void c.log.push(`stop ${name}`)),
            }

    it('starts in list order, gives each part what the parts before it provide, stops in reverse', async () => {
      const c: Fake = { log: [] }
      const lc = new Lifecycle()
      await lc.startList(c, [
        part('db', { provides: { db: 'level' } }),
        part('requester', { absent: true }),
        part('provider'),
        part('api'),
      ])
      assert.equal(lc.status, 'started')
      await lc.stop()
      assert.deepEqual(c.log, [
        'start db',
        'start provider over level',
        'start api over level',
        'stop api',
        'stop provider',
        'stop db',
      ])
    })

    it('a part that fails to start is reported by name; what started stops in reverse', async () => {
      const c: Fake = { log: [] }
      const failed: string[] = []
      const lc = new Lifecycle(undefined, (_err, name) => failed.push(name))
      await assert.rejects(
        lc.startList(c, [part('db'), part('ledger'), part('provider', { fail: true }), part('api')]),
        /provider cannot start/,
      )
      assert.deepEqual(failed, ['provider'])
      assert.deepEqual(c.log, ['start db', 'start ledger', 'stop ledger', 'stop db'])
      assert.equal(lc.status, 'stopped')
    })

    it('a factory that throws is reported by its name', async () => {
      const failed: string[] = []
      const lc = new Lifecycle(undefined, (_err, name) => failed.push(name))
      const c: Fake = { log: [] }
      const broken: PartFactory<Fake> = function executorPart() {
        throw new Error('no engine')
      }
      await assert.rejects(lc.startList(c, [part('db'), broken]), /no engine/)
      assert.deepEqual(failed, ['executorPart'])
      assert.deepEqual(c.log, ['start db', 'stop db'])
    })
  })
})
