import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { canonicalJson } from '../../../actors/canonical-json.js'
import { MAX_WORKER_BYTES, parseWorker, workerIdOf } from '../../../dms/functions/worker.js'
import { h, worker } from './descriptors.js'

const refusal = (body: unknown): { code: string; field: string } => {
  try {
    parseWorker(body)
  } catch (err) {
    const e = err as { code: string; field: string }
    return { code: e.code, field: e.field }
  }
  assert.fail('accepted')
}

describe('the worker descriptor', function () {
  it('is its own id: the sha256 of its canonical JSON, whatever the order of its keys', function () {
    const a = parseWorker(worker())
    const reordered = Object.fromEntries(Object.entries(worker()).reverse())
    assert.equal(workerIdOf(parseWorker(reordered)), workerIdOf(a))
    assert.equal(workerIdOf(a), createHash('sha256').update(canonicalJson(worker())).digest('hex'))
    assert.notEqual(
      workerIdOf(parseWorker(worker({ cores: 2 }))),
      workerIdOf(a),
      'another descriptor, another id',
    )
  })

  it('refuses what a hostile client sends, naming the field', function () {
    const cases: Array<[Record<string, unknown>, string]> = [
      [worker({ executables: [{ path: '../etc/passwd', sha256: h('a'), size: 1 }] }), 'executables.0.path'],
      [worker({ executables: [{ path: '/bin/sh', sha256: h('a'), size: 1 }] }), 'executables.0.path'],
      [worker({ files: [{ path: 'a/../../b', sha256: h('a'), size: 1 }] }), 'files.0.path'],
      [worker({ files: [{ path: ".hidden'; rm -rf /", sha256: h('a'), size: 1 }] }), 'files.0.path'],
      [worker({ executables: [{ path: 'run.sh', sha256: 'NOTHEX', size: 1 }] }), 'executables.0.sha256'],
      [worker({ executables: [{ path: 'run.sh', sha256: h('a'), size: -1 }] }), 'executables.0.size'],
      [worker({ executables: [] }), 'executables'],
      [worker({ functions: [] }), 'functions'],
      [worker({ cores: 1000 }), 'cores'],
      [worker({ timeout: 0 }), 'timeout'],
      [worker({ name: 'a/b' }), 'name'],
      [worker({ hostPlatform: 'plan9' }), 'hostPlatform'],
      [worker({ extra: 1 }), 'extra'],
      [
        worker({
          memoryBytes: 20 * 1024 * 1024,
          files: [{ path: 'big', sha256: h('b'), size: 8 * 1024 * 1024 }],
        }),
        'memoryBytes', // its copy in /tmp and 16 MiB to run do not fit
      ],
      [worker({ environment: { 'A=B': 'x' } }), 'environment'],
      [worker({ dirs: ['..'] }), 'dirs.0'],
      [
        worker({ files: [{ path: 'run.sh', sha256: h('b'), size: 1 }] }),
        'files.0.path', // the same path twice
      ],
      [worker({ files: [{ path: 'run.sh/x', sha256: h('b'), size: 1 }] }), 'files.0.path'],
      [worker({ dirs: ['run.sh'] }), 'dirs.0'],
      [
        worker({
          functions: [
            { name: 'f', version: '1' },
            { name: 'f', version: '1' },
          ],
        }),
        'functions.1',
      ],
      [
        worker({ files: [{ path: 'big', sha256: h('b'), size: MAX_WORKER_BYTES }] }),
        'files', // over the bytes of all files together
      ],
      [
        worker({
          files: Array.from({ length: 1025 }, (_, i) => ({ path: `f${i}`, sha256: h('b'), size: 1 })),
        }),
        'files',
      ],
    ]
    for (const [body, field] of cases)
      assert.deepEqual(refusal(body), { code: 'INVALID_WORKER', field }, field)
    assert.deepEqual(refusal('not an object'), { code: 'INVALID_WORKER', field: '' })
  })
})
