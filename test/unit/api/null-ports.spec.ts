/**
 * A node without a role answers that role's routes with 409 and a message naming the missing
 * config section, through the role's null object (the routes themselves never check roles).
 */
import assert from 'node:assert/strict'
import { detachedPorts, noAllocations, noJobs, noQueues, noResources } from '../../../dms/api/null-ports.js'
import { buildApi } from '../../../dms/api/server.js'
import { silentLogger } from '../../../dms/log.js'

type ErrorBody = { error: { code: string; message: string } }

describe('REST API on a node without a role: the null objects', () => {
  const { app } = buildApi(detachedPorts(), { log: silentLogger })
  after(() => app.close())

  const requesterRoutes: Array<[string, string, unknown?]> = [
    ['POST', '/v1/jobs', { image: 'dms-test:1' }],
    // Refused for the role before the body is read: not a 400 about the spec.
    ['POST', '/v1/jobs', { bogus: true }],
    ['GET', '/v1/jobs'],
    ['GET', '/v1/jobs/abc'],
    ['DELETE', '/v1/jobs/abc'],
    ['GET', '/v1/jobs/abc/logs'],
    ['GET', '/v1/jobs/abc/logs?follow=true'],
    ['GET', '/v1/jobs/abc/outputs'],
    ['GET', '/v1/jobs/abc/outputs.tar'],
    ['GET', '/v1/jobs/abc/outputs/a.txt'],
  ]
  for (const [method, url, payload] of requesterRoutes)
    it(`${method} ${url}${payload ? ` ${JSON.stringify(payload)}` : ''}: 409 NOT_A_REQUESTER`, async () => {
      const res = await app.inject({ method: method as 'GET', url, ...(payload ? { payload } : {}) })
      assert.equal(res.statusCode, 409)
      assert.deepEqual(res.json<ErrorBody>(), {
        error: {
          code: 'NOT_A_REQUESTER',
          message: 'this node is not a requester (no "requester" section in its config)',
        },
      })
    })

  const providerRoutes: Array<[string, string, unknown?]> = [
    ['GET', '/v1/allocations'],
    ['GET', '/v1/resources'],
    ['PUT', '/v1/resources/offer', { cpu: 1 }],
    ['DELETE', '/v1/resources/offer'],
  ]
  for (const [method, url, payload] of providerRoutes)
    it(`${method} ${url}: 409 NOT_A_PROVIDER`, async () => {
      const res = await app.inject({ method: method as 'GET', url, ...(payload ? { payload } : {}) })
      assert.equal(res.statusCode, 409)
      assert.deepEqual(res.json<ErrorBody>(), {
        error: {
          code: 'NOT_A_PROVIDER',
          message: 'this node is not a provider (no "provider" section in its config)',
        },
      })
    })

  it('every method of a null object refuses with its code and 409', async () => {
    const calls: Array<() => unknown> = [
      () => noJobs.post({}),
      () => noJobs.list({ limit: 1 }),
      () => noJobs.rerun('x'),
      () => noQueues.create({ tag: 'x' }),
      () => noQueues.list(),
      () => noQueues.get('x'),
      () => noQueues.drain('x'),
      () => noQueues.cancel('x'),
      () => noJobs.get('x'),
      () => noJobs.cancel('x'),
      () => noJobs.liveLogs('x'),
      () => noJobs.onLog(() => {}),
      () => noJobs.onChange(() => {}),
    ]
    for (const call of calls)
      await assert.rejects(Promise.resolve().then(call), { code: 'NOT_A_REQUESTER', statusCode: 409 })
    for (const call of [
      () => noAllocations.list(),
      () => noResources.view({}),
      () => noResources.onboard({}),
      () => noResources.offboard(),
    ])
      await assert.rejects(call, { code: 'NOT_A_PROVIDER', statusCode: 409 })
  })
})
