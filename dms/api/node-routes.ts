/**
 * Node-wide routes: `/v1/health`, `/v1/info`, `/v1/peers`, `/v1/allocations` (provider),
 * `/metrics` (Prometheus text) and `/v1/openapi.json`, each over its port. Spec: specs/rest-api.md.
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify'
import type { AllocationsPort, InfoPort, MetricsPort, PeersPort } from './ports.js'
import {
  AllocationListReply,
  EarningsReply,
  HealthReply,
  InfoReply,
  MetricsReply,
  OpenApiReply,
  PeerListReply,
  type AllocationSummary,
} from './schemas.js'

export interface NodeRoutesOptions {
  info: InfoPort
  peers: PeersPort
  allocations: AllocationsPort
  metrics: MetricsPort
  openapi: () => object
}

/** When an allocation began: its first history entry. */
const begun = (a: AllocationSummary) => Number(a.history?.[0]?.at ?? 0)
const newestFirst = (x: AllocationSummary, y: AllocationSummary) => begun(y) - begun(x)

export const nodeRoutes: FastifyPluginAsync<NodeRoutesOptions> = (app: FastifyInstance, opts) => {
  app.get(
    '/v1/health',
    {
      config: {
        doc: {
          summary: 'liveness: the API answers',
          responses: { 200: { description: 'up', schema: HealthReply } },
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
          responses: { 200: { description: 'node info', schema: InfoReply } },
        },
      },
    },
    () => opts.info.info(),
  )

  app.get(
    '/v1/peers',
    {
      config: {
        doc: {
          summary: 'peers with an open libp2p connection',
          responses: { 200: { description: 'connected peers, by peer id', schema: PeerListReply } },
        },
      },
    },
    async () => ({
      peers: (await opts.peers.list()).sort((a, b) => (a.peerId ?? '').localeCompare(b.peerId ?? '')),
    }),
  )

  app.get(
    '/v1/allocations',
    {
      config: {
        doc: {
          role: 'provider',
          summary: "this provider's allocations (running and ended)",
          responses: {
            200: { description: 'allocations, newest first', schema: AllocationListReply },
            409: { description: 'NOT_A_PROVIDER' },
          },
        },
      },
    },
    async () => ({ allocations: (await opts.allocations.list()).sort(newestFirst) }),
  )

  app.get(
    '/v1/earnings',
    {
      config: {
        doc: {
          role: 'provider',
          summary: "this provider's books: paid, claimed, refunded and outstanding, per requester",
          responses: {
            200: { description: 'the books (micro-tokens and counts)', schema: EarningsReply },
            409: { description: 'NOT_A_PROVIDER' },
          },
        },
      },
    },
    () => opts.allocations.earnings(),
  )

  app.get(
    '/metrics',
    {
      config: {
        doc: {
          summary: 'metrics in the Prometheus text format (0.0.4)',
          responses: { 200: { description: 'metrics', contentType: 'text/plain', schema: MetricsReply } },
        },
      },
    },
    async (_req, reply) =>
      reply.header('content-type', opts.metrics.contentType).send(await opts.metrics.render()),
  )

  app.get(
    '/v1/openapi.json',
    {
      config: {
        doc: {
          summary: 'this OpenAPI document',
          responses: { 200: { description: 'OpenAPI 3.1', schema: OpenApiReply } },
        },
      },
    },
    () => opts.openapi(),
  )
  return Promise.resolve()
}
