/**
 * Topic management with real nodes on 127.0.0.1: a requester leaves capacity news over the REST
 * API (its provider sees it leave, and the built CLI lists it), then joins again; names that are not DMS
 * topics, topics a role needs and a provider asking are refused before anything is done.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { ApiClient } from '../../../dms/api/client.js'
import { BID_REQUEST_TOPIC, CAPACITY_TOPIC } from '../../../dms/protocol/handles.js'
import { startNetwork, type TestNetwork } from '../../helpers/network.js'

const exec = promisify(execFile)
const MiB = 1024 * 1024

interface Topics {
  subscribed: string[]
  known: Array<{ topic: string; peers: number }>
  optional: Array<{ topic: string; subscribed: boolean }>
}

describe('topic management over the API', function () {
  this.timeout(120_000)
  let net: TestNetwork

  before(async () => {
    net = await startNetwork([{ cpu: 1, memoryBytes: 512 * MiB, perCpuHour: 1000 }], {
      requester: { bidWindowMs: 1000 },
    })
  })
  after(() => net?.stop())

  it('a requester leaves capacity news (its provider sees it go), then joins again; the CLI lists the topics', async () => {
    const api = new ApiClient(net.requester.socketPath!)
    const before = await api.ok<Topics>('GET', '/v1/topics')
    assert.ok(before.subscribed.includes(CAPACITY_TOPIC))
    assert.deepEqual(
      before.optional.map((o) => [o.topic, o.subscribed]),
      [[CAPACITY_TOPIC, true]],
    )
    assert.ok(before.known.some((k) => k.topic === BID_REQUEST_TOPIC && k.peers === 1))

    // The provider hears the requester leave the topic (gossipsub's subscription-change).
    const pubsub = net.providers[0].host.services.pubsub
    const left = new Promise<void>((resolve) => {
      const on = (
        e: CustomEvent<{
          peerId: { toString(): string }
          subscriptions: Array<{ topic: string; subscribe: boolean }>
        }>,
      ) => {
        if (e.detail.peerId.toString() !== net.requester.peerId) return
        if (!e.detail.subscriptions.some((x) => x.topic === CAPACITY_TOPIC && !x.subscribe)) return
        pubsub.removeEventListener('subscription-change', on)
        resolve()
      }
      pubsub.addEventListener('subscription-change', on)
    })
    const out = await api.ok<Topics>('POST', '/v1/topics/unsubscribe', { topic: CAPACITY_TOPIC })
    assert.ok(!out.subscribed.includes(CAPACITY_TOPIC), 'left the gossip topic')
    assert.equal(out.optional[0].subscribed, false)
    const { stdout } = await exec(process.execPath, [
      'bin/dms.js',
      'topics',
      '--socket',
      net.requester.socketPath!,
    ])
    assert.match(stdout, /\/dms\/bid-requests\/1\s+no\s+1\s+no/)
    assert.match(stdout, /\/dms\/capacity\/1\s+no\s+\d+\s+yes/)

    await left
    assert.equal(net.providers[0].transport.topicPeers(CAPACITY_TOPIC), 0, 'the provider has no one to tell')

    const back = await api.ok<Topics>('POST', '/v1/topics/subscribe', { topic: CAPACITY_TOPIC })
    assert.ok(back.subscribed.includes(CAPACITY_TOPIC))
    assert.equal(back.optional[0].subscribed, true)
  })

  it('refuses names that are not DMS topics, topics a role needs, and a node without the role', async () => {
    const api = new ApiClient(net.requester.socketPath!)
    const unknown = await api.call<{ error: { code: string; field: string } }>(
      'POST',
      '/v1/topics/subscribe',
      {
        topic: '/dms/anything/1',
      },
    )
    assert.equal(unknown.status, 400)
    assert.equal(unknown.body.error.code, 'UNKNOWN_TOPIC')
    assert.equal(unknown.body.error.field, 'body/topic')
    const long = await api.call<{ error: { field: string } }>('POST', '/v1/topics/subscribe', {
      topic: 'x'.repeat(129),
    })
    assert.equal(long.status, 400)
    assert.equal(long.body.error.field, 'body/topic')
    const needed = await api.call<{ error: { code: string } }>('POST', '/v1/topics/unsubscribe', {
      topic: BID_REQUEST_TOPIC,
    })
    assert.equal(needed.status, 409)
    assert.equal(needed.body.error.code, 'TOPIC_NOT_OPTIONAL')
    const provider = new ApiClient(net.providers[0].socketPath!)
    const notRequester = await provider.call<{ error: { code: string } }>('POST', '/v1/topics/unsubscribe', {
      topic: CAPACITY_TOPIC,
    })
    assert.equal(notRequester.status, 409)
    assert.equal(notRequester.body.error.code, 'NOT_A_REQUESTER')
    const view = await provider.ok<Topics>('GET', '/v1/topics')
    assert.deepEqual(view.subscribed, [BID_REQUEST_TOPIC])
    assert.deepEqual(view.optional, [])
  })
})
