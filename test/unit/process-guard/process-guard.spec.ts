import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { EventEmitter } from 'node:events'
import { join } from 'node:path'
import { silentLogger } from '../../../dms/log.js'
import { ProcessGuard } from '../../../dms/process-guard.js'

const ROOT = join(import.meta.dirname, '../../..')

/** Runs the fixture in its own process; resolves with its exit code and output. */
function child(mode: 'guarded' | 'bare'): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', join(ROOT, 'test/fixtures/process-guard-child.ts'), mode],
      { cwd: ROOT, timeout: 20_000 },
      (err, stdout, stderr) =>
        resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : -1, stdout, stderr }),
    )
  })
}

describe('ProcessGuard: the last resort of a serving node', function () {
  this.timeout(30_000)

  it('without it, an error thrown outside any call ends the process', async () => {
    const bare = await child('bare')
    assert.notEqual(bare.code, 0)
    assert.equal(bare.stdout, '')
  })

  it('with it, the process logs and counts each such error and goes on', async () => {
    const guarded = await child('guarded')
    assert.equal(guarded.code, 0, guarded.stderr)
    assert.deepEqual(JSON.parse(guarded.stdout), { uncaughtException: 1, unhandledRejection: 1 })
    const logged = guarded.stderr
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { level: number; fault: string; err: { message: string } })
    assert.deepEqual(logged.map((l) => [l.level, l.fault, l.err.message]).sort(), [
      [50, 'uncaughtException', 'an emitter with no error listener'],
      [50, 'unhandledRejection', 'a promise nobody awaits'],
    ])
  })

  it('tells its observers of each fault as it is caught (the metrics count at that event)', () => {
    const target = new EventEmitter()
    const guard = new ProcessGuard({ log: silentLogger }, target as unknown as NodeJS.Process).install()
    const seen: string[] = []
    const off = guard.observe((kind) => seen.push(kind))
    target.emit('uncaughtException', new Error('x'))
    target.emit('unhandledRejection', new Error('y'))
    off()
    target.emit('uncaughtException', new Error('z'))
    guard.uninstall()
    assert.deepEqual(seen, ['uncaughtException', 'unhandledRejection'])
    assert.deepEqual(guard.counts(), { uncaughtException: 2, unhandledRejection: 1 })
  })
})
