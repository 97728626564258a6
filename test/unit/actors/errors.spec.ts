import assert from 'node:assert/strict'
import { codeOf, DmsError, isCode, RefusedError, RemoteError } from '../../../actors/errors.js'
import { JobFailure } from '../../../dms/orchestrator/job-machine.js'
import { InsufficientResourcesError } from '../../../dms/resources/errors.js'
import { ImageNotFoundError } from '../../../dms/executor/errors.js'

class ExampleError extends DmsError<{ limit: number }> {
  constructor(limit: number) {
    super('OVER_LIMIT', `over ${limit}`, { limit })
  }
}

describe('actors/errors', () => {
  it('DmsError: name is the class name, a stable code, optional data, an Error', () => {
    const e = new ExampleError(3)
    assert.ok(e instanceof Error && e instanceof DmsError)
    assert.equal(e.name, 'ExampleError')
    assert.equal(e.code, 'OVER_LIMIT')
    assert.deepEqual(e.data, { limit: 3 })
    assert.equal(e.message, 'over 3')
    assert.equal(new DmsError('X', 'y').data, undefined)
  })

  it('the existing error classes are DmsErrors with their names and codes', () => {
    const cases: Array<[DmsError, string, string]> = [
      [
        new RefusedError('BID_NOT_OPEN', 'bid is locked', { state: 'locked' }),
        'RefusedError',
        'BID_NOT_OPEN',
      ],
      [new JobFailure('PROVIDER_SILENT', 'no heartbeat'), 'JobFailure', 'PROVIDER_SILENT'],
      [new ImageNotFoundError('x:1'), 'ImageNotFoundError', 'IMAGE_NOT_FOUND'],
      [
        new InsufficientResourcesError(
          { cpu: 2, memoryBytes: 0, diskBytes: 0, gpus: 0 },
          { cpu: 1, memoryBytes: 0, diskBytes: 0, gpus: 0 },
        ),
        'InsufficientResourcesError',
        'INSUFFICIENT_RESOURCES',
      ],
    ]
    for (const [e, name, code] of cases) {
      assert.ok(e instanceof DmsError, name)
      assert.equal(e.name, name)
      assert.equal(e.code, code)
    }
    assert.deepEqual(new RefusedError('A', 'b', { state: 'locked' }).data, { state: 'locked' })
  })

  it('isCode and codeOf read the code of any error that has one', () => {
    const remote = new RemoteError('CONTRACT_NOT_ACTIVE', 'settled already')
    assert.equal(isCode(remote, 'CONTRACT_NOT_ACTIVE'), true)
    assert.equal(isCode(remote, ['UNREACHABLE', 'CONTRACT_NOT_ACTIVE']), true)
    assert.equal(isCode(remote, 'UNREACHABLE'), false)
    assert.equal(isCode(Object.assign(new Error('x'), { code: 'ENOENT' }), 'ENOENT'), true)
    assert.equal(isCode(new Error('no code'), ''), false)
    assert.equal(isCode(undefined, 'X'), false)
    assert.equal(codeOf(new Error('plain')), 'INTERNAL')
    assert.equal(codeOf('a string', 'ERROR'), 'ERROR')
    assert.equal(codeOf(remote), 'CONTRACT_NOT_ACTIVE')
  })
})
