/**
 * Node-wide routes: `/v1/health`, `/v1/info`, `/v1/peers`, `/v1/allocations` (provider),
 * `/metrics` (Prometheus text) and `/v1/openapi.json`. Spec: specs/rest-api.md.
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify'
import { BID_REQUEST_TOPIC } from '../protocol/handles.js'
import type { DmsNode } from '../node.js'
import { DMS_VERSION } from './openapi.js'
import { collectNodeMetrics, PROMETHEUS_CONTENT_TYPE, renderPrometheus } from './metrics.js'

export interface NodeRoutesOptions {
  node: () => DmsNode
  openapi: () => object
}

const peerSchema = {
  type: 'object',
  properties: {
    peerId: { type: 'string' },
    addrs: { type: 'array', items: { type: 'string' } },
    direction: { type: 'string', enum: ['inbound', 'outbound'] },
    bidTopic: {
      type: 'boolean',
      description: 'a live subscriber of the bid request topic (a provider or relay)',
    },
    gossipScore: { type: 'number', description: 'its gossipsub score at this node' },
    graylisted: {
      type: 'boolean',
      description: 'its score is below the graylist threshold: every gossip RPC from it is dropped',
    },
  },
} as const

const allocationSchema = {
  type: 'object',
  properties: {
    allocationId: { type: 'string' },
    jobId: { type: 'string' },
    contractId: { type: 'string' },
    requester: { type: 'string', description: 'peer id' },
    state: { type: 'string' },
    history: { type: 'array', items: { type: 'object' } },
    result: { type: 'object' },
  },
} as const

const notAProvider = () =>
  Object.assign(new Error('this node is not a provider (no "provider" section in its config)'), {
    statusCode: 409,
    code: 'NOT_A_PROVIDER',
  })

export const nodeRoutes: FastifyPluginAsync<NodeRoutesOptions> = (
  app: FastifyInstance,
  opts: NodeRoutesOptions,
) => {
  app.get(
    '/v1/health',
    {
      config: {
        doc: {
          summary: 'liveness: the API answers',
          responses: {
            200: { description: 'up', schema: { type: 'object', properties: { ok: { const: true } } } },
          },
        },
      },
    },
    () => ({ ok: true }),
  )

  app.get(
    '/v1/info',
    {
      config: {
        doc: {
          summary: 'identity, addresses, roles and receive counters',
          responses: {
            200: {
              description: 'node info',
              schema: {
                type: 'object',
                properties: {
                  peerId: { type: 'string' },
                  version: { type: 'string' },
                  addrs: { type: 'array', items: { type: 'string' } },
                  roles: {
                    type: 'object',
                    properties: { requester: { type: 'boolean' }, provider: { type: 'boolean' } },
                  },
                  bidTopicPeers: { type: 'integer' },
                  rejections: { type: 'object', additionalProperties: { type: 'integer' } },
                  late: { type: 'object', additionalProperties: { type: 'integer' } },
                  approval: {
                    type: 'array',
                    description: "this node's approval credential from each contract-db it uses",
                    items: {
                      type: 'object',
                      properties: {
                        contractDb: { type: 'string' },
                        approved: { type: 'boolean' },
                        expiresAt: { type: 'integer', description: 'ms since the epoch' },
                        lastError: {
                          type: 'object',
                          properties: {
                            code: { type: 'string' },
                            message: { type: 'string' },
                            at: { type: 'integer' },
                          },
                        },
                      },
                    },
                  },
                  payloadsRefused: {
                    type: 'object',
                    description: 'payloads refused at decode, by behaviour, then reason',
                    additionalProperties: { type: 'object', additionalProperties: { type: 'integer' } },
                  },
                  bidsIgnored: {
                    type: 'object',
                    description: 'requester: bids not ranked, by reason',
                    additionalProperties: { type: 'integer' },
                  },
                  bidRequestsIgnored: {
                    type: 'object',
                    description: 'provider: bid requests dropped without an answer, by reason',
                    additionalProperties: { type: 'integer' },
                  },
                },
              },
            },
          },
        },
      },
    },
    () => {
      const node = opts.node()
      return {
        peerId: node.peerId,
        version: DMS_VERSION,
        addrs: node.addrs(),
        roles: { requester: node.orchestrator !== undefined, provider: node.provider !== undefined },
        bidTopicPeers: node.transport.topicPeers(BID_REQUEST_TOPIC),
        rejections: node.system.rejections,
        late: node.system.late,
        approval: [...node.approvals.values()].map((a) => a.status()),
        payloadsRefused: node.payloadRefusals,
        ...(node.orchestrator !== undefined ? { bidsIgnored: node.orchestrator.bidsIgnored } : {}),
        ...(node.provider !== undefined ? { bidRequestsIgnored: node.provider.bidRequestsIgnored } : {}),
      }
    },
  )

  app.get(
    '/v1/peers',
    {
      config: {
        doc: {
          summary: 'peers with an open libp2p connection',
          responses: {
            200: {
              description: 'connected peers, by peer id',
              schema: { type: 'object', properties: { peers: { type: 'array', items: peerSchema } } },
            },
          },
        },
      },
    },
    () => {
      const node = opts.node()
      const bid = new Set(node.transport.topicSubscribers(BID_REQUEST_TOPIC))
      const peers = new Map<
        string,
        {
          peerId: string
          addrs: string[]
          direction: string
          bidTopic: boolean
          gossipScore: number
          graylisted: boolean
        }
      >()
      for (const c of node.host.getConnections()) {
        const id = c.remotePeer.toString()
        const p = peers.get(id) ?? {
          peerId: id,
          addrs: [],
          direction: c.direction,
          bidTopic: bid.has(id),
          gossipScore: node.transport.gossipScore(id) ?? 0,
          graylisted: node.transport.graylisted(id),
        }
        p.addrs.push(c.remoteAddr.toString())
        peers.set(id, p)
      }
      return { peers: [...peers.values()].sort((a, b) => a.peerId.localeCompare(b.peerId)) }
    },
  )

  app.get(
    '/v1/allocations',
    {
      config: {
        doc: {
          summary: "this provider's allocations (running and ended)",
          responses: {
            200: {
              description: 'allocations, newest first',
              schema: {
                type: 'object',
                properties: { allocations: { type: 'array', items: allocationSchema } },
              },
            },
            409: { description: 'NOT_A_PROVIDER' },
          },
        },
      },
    },
    async () => {
      const provider = opts.node().provider
      if (provider === undefined) throw notAProvider()
      const all = await provider.allocations.repo.values()
      return {
        allocations: all
          .map((a) => ({
            allocationId: a.allocationId,
            jobId: a.jobId,
            contractId: a.contract.terms.contractId,
            requester: a.requester.peer,
            state: a.state,
            history: a.history,
            result: a.result,
          }))
          .sort((x, y) => (y.history[0]?.at ?? 0) - (x.history[0]?.at ?? 0)),
      }
    },
  )

  app.get(
    '/metrics',
    {
      config: {
        doc: {
          summary: 'metrics in the Prometheus text format (0.0.4)',
          responses: {
            200: { description: 'metrics', contentType: 'text/plain', schema: { type: 'string' } },
          },
        },
      },
    },
    async (_req, reply) => {
      const text = renderPrometheus(await collectNodeMetrics(opts.node()))
      return reply.header('content-type', PROMETHEUS_CONTENT_TYPE).send(text)
    },
  )

  app.get(
    '/v1/openapi.json',
    {
      config: {
        doc: {
          summary: 'this OpenAPI document',
          responses: { 200: { description: 'OpenAPI 3.1', schema: { type: 'object' } } },
        },
      },
    },
    () => opts.openapi(),
  )
  return Promise.resolve()
}
