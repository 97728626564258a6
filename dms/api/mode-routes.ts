/**
 * The provider's lifecycle routes: `GET /v1/node/mode`, `POST /v1/node/pause|resume|drain`, over
 * the mode port (a node that is not a provider answers 409 NOT_A_PROVIDER). Spec:
 * specs/node-lifecycle.md.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyPluginAsync } from 'fastify'
import type { NodeModePort } from './ports.js'
import { DrainBody, ModeReply } from './schemas.js'

export interface ModeRoutesOptions {
  mode: NodeModePort
}

const conflict = { description: 'NODE_MODE_CONFLICT: the current mode refuses it; NOT_A_PROVIDER' }

export const modeRoutes: FastifyPluginAsync<ModeRoutesOptions> = (base: FastifyInstance, { mode }) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  app.get(
    '/v1/node/mode',
    {
      config: {
        doc: {
          role: 'provider',
          summary: "the provider's mode: ready, paused, draining or drained",
          responses: { 200: { description: 'the mode', schema: ModeReply } },
        },
      },
    },
    () => mode.view(),
  )
  app.post(
    '/v1/node/pause',
    {
      config: {
        doc: {
          role: 'provider',
          summary: 'stop taking new jobs (declined "paused"); work in progress goes on',
          responses: { 200: { description: 'paused', schema: ModeReply }, 409: conflict },
        },
      },
    },
    () => mode.pause(),
  )
  app.post(
    '/v1/node/resume',
    {
      config: {
        doc: {
          role: 'provider',
          summary: 'take new jobs again (from paused, draining or drained)',
          responses: { 200: { description: 'ready', schema: ModeReply }, 409: conflict },
        },
      },
    },
    () => mode.resume(),
  )
  app.post(
    '/v1/node/drain',
    {
      schema: { body: DrainBody },
      config: {
        doc: {
          role: 'provider',
          summary:
            'drain: decline new jobs, free open reservations, finish the work in progress; then drained (and stopped, with `stop`)',
          responses: { 202: { description: 'draining, or drained', schema: ModeReply }, 409: conflict },
        },
      },
    },
    async (req, reply) => reply.status(202).send(await mode.drain({ stop: req.body?.stop })),
  )
  return Promise.resolve()
}
