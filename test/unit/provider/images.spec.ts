import assert from 'node:assert/strict'
import { silentLogger } from '../../../dms/log.js'
import { ImageCheck, type ImageCheckInit } from '../../../dms/provider/images.js'

/** The engine's side, recorded: which images were looked up (the real executor asks the engine). */
function engine(answer: (image: string) => Promise<boolean> = () => Promise.resolve(true)) {
  const asked: string[] = []
  return {
    asked,
    hasArtifact: ({ ref }: { ref: string }) => {
      asked.push(ref)
      return answer(ref)
    },
  }
}

describe('provider/images ImageCheck', () => {
  const clock = { t: 1_000, now: () => clock.t }
  const check = (executor: ReturnType<typeof engine>, init?: ImageCheckInit) =>
    new ImageCheck({ executor, clock, log: silentLogger }, init)

  it('refuses what is not a reference, and registries it does not use, without asking the engine', () => {
    const e = engine()
    const images = check(e)
    assert.match(
      images.refusal('../../containers/json') ?? '',
      /^invalid image: registry "\.\." is not a host name/,
    )
    assert.match(images.refusal('a//b') ?? '', /^invalid image: empty path component/)
    assert.equal(images.refusal('127.0.0.1:1/x'), 'image registry 127.0.0.1:1 is not used by this provider')
    assert.equal(
      images.refusal('registry.example/app'),
      'image registry registry.example is not used by this provider',
    )
    assert.equal(images.refusal('dms-test:1'), undefined)
    assert.equal(images.refusal('docker.io/library/busybox'), undefined)
    const more = check(e, { registries: ['docker.io', 'registry.example'] })
    assert.equal(more.refusal('registry.example/app'), undefined)
    assert.deepEqual(e.asked, [])
  })

  it('asks the engine once per image per TTL, shares a look-up in flight, and keeps at most maxEntries', async () => {
    let release: () => void = () => undefined
    const e = engine((image) =>
      image === 'slow:1'
        ? new Promise((r) => (release = () => r(true)))
        : Promise.resolve(image !== 'none:1'),
    )
    const images = check(e, { ttlMs: 10_000, maxEntries: 2 })
    // The same image by two names is one look-up.
    assert.equal(await images.canRun('dms-test:1'), true)
    assert.equal(await images.canRun('docker.io/library/dms-test:1'), true)
    assert.deepEqual(e.asked, ['dms-test:1'])
    // Concurrent callers share the look-up in flight.
    const both = Promise.all([images.canRun('slow:1'), images.canRun('slow:1')])
    release()
    assert.deepEqual(await both, [true, true])
    assert.deepEqual(e.asked, ['dms-test:1', 'slow:1'])
    // A negative answer is kept too; the third image pushed out the oldest (dms-test:1).
    assert.equal(await images.canRun('none:1'), false)
    assert.equal(await images.canRun('none:1'), false)
    assert.equal(await images.canRun('dms-test:1'), true)
    assert.deepEqual(e.asked, ['dms-test:1', 'slow:1', 'none:1', 'dms-test:1'])
    assert.equal(images.lookups, 4)
    // After the TTL the engine is asked again.
    clock.t += 10_000
    assert.equal(await images.canRun('none:1'), false)
    assert.equal(images.lookups, 5)
  })

  it('takes an engine error as "cannot run", and keeps that answer for the TTL too', async () => {
    const e = engine(() =>
      Promise.reject(Object.assign(new Error('(HTTP code 301) unexpected'), { statusCode: 301 })),
    )
    const images = check(e)
    assert.equal(await images.canRun('x:1'), false)
    assert.equal(await images.canRun('x:1'), false)
    assert.equal(e.asked.length, 1)
  })
})
