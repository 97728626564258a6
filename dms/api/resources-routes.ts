/**
 * Provider resource routes: `GET /v1/resources`, `PUT /v1/resources/offer` (onboard),
 * `DELETE /v1/resources/offer` (offboard). A self-contained Fastify plugin with its own strict
 * ajv (unknown fields are refused, not dropped) and its own error mapping. Spec: specs/rest-api.md.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Ajv } from 'ajv'
import { validatorOnUse } from '../schema.js'
import type { FastifyError, FastifyInstance, FastifyPluginAsync } from 'fastify'
import { onboardRequestSchema } from '../resources/onboard-request.js'
import { apiError, validationError } from './errors.js'
import type { ResourcesPort } from './ports.js'
import { isSet, RefreshQuery, ResourcesReply } from './schemas.js'

export interface ResourceRoutesOptions {
  /** The provider's resources (the null object on a node that is not a provider: 409). */
  resources: ResourcesPort
}

/** HTTP status for each resource error code; anything else with a code is a 400. */
const STATUS: Record<string, number> = {
  NOT_A_PROVIDER: 409,
  NOT_ONBOARDED: 409,
  OFFER_BELOW_COMMITTED: 409,
  OFFER_EXCEEDS_MACHINE: 422,
}

const ajv = new Ajv({ allErrors: false, strict: true, allowUnionTypes: true })

export const resourceRoutes: FastifyPluginAsync<ResourceRoutesOptions> = (
  base: FastifyInstance,
  { resources }: ResourceRoutesOptions,
) => {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  app.setValidatorCompiler(({ schema }) => validatorOnUse(ajv, schema))
  app.setErrorHandler((err: FastifyError, _req, reply) => {
    const invalid = validationError(err)
    if (invalid !== undefined) return reply.status(400).send(invalid)
    const code = typeof err.code === 'string' && /^[A-Z_]+$/.test(err.code) ? err.code : undefined
    if (code === undefined || code.startsWith('FST_')) throw err // the server's own handler
    return reply.status(STATUS[code] ?? 400).send(apiError(code, err.message))
  })

  app.get(
    '/v1/resources',
    {
      schema: { querystring: RefreshQuery },
      config: {
        doc: {
          role: 'provider',
          summary: "the provider's machine, offer, and free/reserved/locked/allocated resources",
          description: '`?refresh=true` measures the machine again (ResourcesView, specs/resources.md).',
          responses: { 200: { description: 'ResourcesView', schema: ResourcesReply } },
        },
      },
    },
    (req) => resources.view({ refresh: isSet(req.query.refresh) }),
  )
  app.put(
    '/v1/resources/offer',
    {
      schema: { body: onboardRequestSchema },
      config: {
        doc: {
          role: 'provider',
          summary: 'onboard, or change the offer in place (dms onboard)',
          responses: {
            200: { description: 'ResourcesView after the change', schema: ResourcesReply },
            409: { description: 'OFFER_BELOW_COMMITTED' },
            422: { description: 'OFFER_EXCEEDS_MACHINE' },
          },
        },
      },
    },
    (req) => resources.onboard(req.body ?? {}),
  )
  app.delete(
    '/v1/resources/offer',
    {
      config: {
        doc: {
          role: 'provider',
          summary: 'offboard: withdraw the offer (dms offboard); running work finishes',
          responses: {
            200: { description: 'ResourcesView after the change', schema: ResourcesReply },
            409: { description: 'NOT_ONBOARDED' },
          },
        },
      },
    },
    () => resources.offboard(),
  )
  return Promise.resolve()
}
