import assert from 'node:assert/strict'
import { resolveListedId } from '../../../dms/cli/resolve-id.js'

const QUEUES = [
  { id: '3f2a1111-0000-4000-8000-000000000001', name: 'nightly' },
  { id: '3f2b2222-0000-4000-8000-000000000002', name: 'batch' },
  { id: '9c003333-0000-4000-8000-000000000003', name: 'batch' },
]

describe('ids by name or prefix (issue 35)', () => {
  const resolve = (given: string) => resolveListedId('queue', given, () => Promise.resolve(QUEUES))

  it('takes a queue by its tag or by a unique id prefix', async () => {
    assert.equal(await resolve('nightly'), QUEUES[0].id)
    assert.equal(await resolve('3f2a'), QUEUES[0].id)
    assert.equal(await resolve('9c00'), QUEUES[2].id)
  })

  it('refuses an ambiguous tag or prefix, listing the matches', async () => {
    await assert.rejects(
      resolve('batch'),
      /queue "batch" is ambiguous: 3f2b2222.*, 9c003333.*give more of the id/,
    )
    const twins = [...QUEUES, { id: '3f2a9999-0000-4000-8000-000000000009', name: 'other' }]
    await assert.rejects(
      resolveListedId('queue', '3f2a', () => Promise.resolve(twins)),
      /queue "3f2a" is ambiguous: 3f2a1111-.*, 3f2a9999-/,
    )
  })

  it('takes a tag as long as an id (tags go to 64 characters), and a workflow by its name', async () => {
    const long = 'a-nightly-batch-of-renders-for-the-whole-team'
    const queues = [...QUEUES, { id: '7e007777-0000-4000-8000-000000000007', name: long }]
    assert.equal(await resolveListedId('queue', long, () => Promise.resolve(queues)), queues[3].id)
    const workflows = [
      { id: 'aa001111-0000-4000-8000-000000000001', name: 'etl' },
      { id: 'bb002222-0000-4000-8000-000000000002' },
    ]
    assert.equal(await resolveListedId('workflow', 'etl', () => Promise.resolve(workflows)), workflows[0].id)
    assert.equal(await resolveListedId('workflow', 'bb00', () => Promise.resolve(workflows)), workflows[1].id)
  })

  it('passes a full id, an unknown name or a short prefix through without a list', async () => {
    let listed = 0
    const counting = (given: string) =>
      resolveListedId('queue', given, () => {
        listed++
        return Promise.resolve(QUEUES)
      })
    assert.equal(await counting(QUEUES[1].id), QUEUES[1].id)
    assert.equal(listed, 0)
    assert.equal(await counting('nope'), 'nope')
    assert.equal(await counting('3f2'), '3f2')
  })
})
