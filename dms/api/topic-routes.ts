/**
 * Topic management: `GET /v1/topics`, `POST /v1/topics/subscribe|unsubscribe` over the topics
 * port. A name that is not a DMS topic is 400 `UNKNOWN_TOPIC` (field `body/topic`); a topic a role
 * needs is 409 `TOPIC_NOT_OPTIONAL`. Spec: specs/queueing.md ("Topics"), specs/rest-api.md.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyPluginAsync } from 'fastify'
import type { TopicsPort } from './ports.js'
import { TopicBody, TopicsReply } from './schemas.js'

export interface TopicRoutesOptions {
  topics: TopicsPort
}

const refused = {
  400: { description: 'UNKNOWN_TOPIC (not a DMS topic) or INVALID_REQUEST, naming body/topic' },
  409: { description: 'TOPIC_NOT_OPTIONAL (a role needs it)' },
}

export const topicRoutes: FastifyPluginAsync<TopicRoutesOptions> = (base: FastifyInstance, { topics }) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  app.get(
    '/v1/topics',
    {
      config: {
        doc: {
          summary: 'gossip topics: subscribed, known from peers, and the optional ones',
          responses: { 200: { description: 'the topics', schema: TopicsReply } },
        },
      },
    },
    () => topics.view(),
  )
  for (const action of ['subscribe', 'unsubscribe'] as const)
    app.post(
      `/v1/topics/${action}`,
      {
        schema: { body: TopicBody },
        config: {
          doc: {
            role: 'requester',
            summary:
              action === 'subscribe'
                ? 'join an optional DMS topic (kept across restarts)'
                : 'leave an optional DMS topic (kept across restarts)',
            responses: { 200: { description: 'the topics now', schema: TopicsReply }, ...refused },
          },
        },
      },
      (req) => topics[action](req.body.topic),
    )
  return Promise.resolve()
}
