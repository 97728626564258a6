/**
 * Provider resource routes: `GET /v1/resources`, `PUT /v1/resources/offer` (onboard),
 * `DELETE /v1/resources/offer` (offboard). A self-contained Fastify plugin with its own strict
 * ajv (unknown fields are refused, not dropped) and its own error mapping. Spec: specs/rest-api.md.
 */
import { Ajv } from 'ajv'
import type { FastifyError, FastifyInstance, FastifyPluginAsync } from 'fastify'
import { DmsError } from '../../actors/errors.js'
import type { Onboarding, OnboardRequest } from '../resources/onboarding.js'

export interface ResourceRoutesOptions {
  /** The node's onboarding service; undefined when the node has no provider role. */
  onboarding: () => Onboarding | undefined
}

const amount = { type: ['number', 'string'], maxLength: 64 }
const price = { type: 'integer', minimum: 0 }

/** Body of `PUT /v1/resources/offer`: `OnboardRequest`. */
export const onboardRequestSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    cpu: amount,
    memory: amount,
    disk: amount,
    gpus: { type: 'array', maxItems: 256, items: { type: 'integer', minimum: 0 } },
    prices: {
      type: 'object',
      additionalProperties: false,
      properties: {
        perCpuHour: price,
        perGiBMemoryHour: price,
        perGiBDiskHour: price,
        perGpuHour: price,
        minJobPrice: price,
      },
    },
  },
} as const

const refreshQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: { refresh: { type: 'string', enum: ['true', 'false', '1', '0'] } },
} as const

/** HTTP status for each resource error code; anything else with a code is a 400. */
const STATUS: Record<string, number> = {
  NOT_A_PROVIDER: 409,
  NOT_ONBOARDED: 409,
  OFFER_BELOW_COMMITTED: 409,
  OFFER_EXCEEDS_MACHINE: 422,
}

const ajv = new Ajv({ allErrors: false, strict: true, allowUnionTypes: true })

class NotAProviderError extends DmsError {
  constructor() {
    super('NOT_A_PROVIDER', 'this node is not a provider (no "provider" section in its config)')
  }
}

export const resourceRoutes: FastifyPluginAsync<ResourceRoutesOptions> = (
  app: FastifyInstance,
  opts: ResourceRoutesOptions,
) => {
  app.setValidatorCompiler(({ schema }) => ajv.compile(schema))
  app.setErrorHandler((err: FastifyError, _req, reply) => {
    if (err.validation !== undefined) {
      const first = err.validation[0]
      const field = `${err.validationContext ?? 'body'}${first?.instancePath ?? ''}`
      const detail =
        first?.keyword === 'additionalProperties'
          ? `unknown field "${String((first.params as { additionalProperty?: string }).additionalProperty)}"`
          : (first?.message ?? err.message)
      return reply.status(400).send({
        error: { code: 'INVALID_REQUEST', message: `${field}: ${detail}`, field },
      })
    }
    const code = typeof err.code === 'string' && /^[A-Z_]+$/.test(err.code) ? err.code : undefined
    if (code === undefined || code.startsWith('FST_')) throw err // the server's own handler
    return reply.status(STATUS[code] ?? 400).send({ error: { code, message: err.message } })
  })

  const onboarding = (): Onboarding => {
    const o = opts.onboarding()
    if (o === undefined) throw new NotAProviderError()
    return o
  }

  app.get<{ Querystring: { refresh?: string } }>(
    '/v1/resources',
    {
      schema: { querystring: refreshQuerySchema },
      config: {
        doc: {
          summary: "the provider's machine, offer, and free/reserved/locked/allocated resources",
          description: '`?refresh=true` measures the machine again (ResourcesView, specs/resources.md).',
          responses: { 200: { description: 'ResourcesView', schema: { type: 'object' } } },
        },
      },
    },
    (req) => onboarding().view({ refresh: req.query.refresh === 'true' || req.query.refresh === '1' }),
  )
  app.put<{ Body: OnboardRequest }>(
    '/v1/resources/offer',
    {
      schema: { body: onboardRequestSchema },
      config: {
        doc: {
          summary: 'onboard, or change the offer in place (dms onboard)',
          responses: {
            200: { description: 'ResourcesView after the change', schema: { type: 'object' } },
            409: { description: 'OFFER_BELOW_COMMITTED' },
            422: { description: 'OFFER_EXCEEDS_MACHINE' },
          },
        },
      },
    },
    (req) => onboarding().onboard(req.body ?? {}),
  )
  app.delete(
    '/v1/resources/offer',
    {
      config: {
        doc: {
          summary: 'offboard: withdraw the offer (dms offboard); running work finishes',
          responses: {
            200: { description: 'ResourcesView after the change', schema: { type: 'object' } },
            409: { description: 'NOT_ONBOARDED' },
          },
        },
      },
    },
    () => onboarding().offboard(),
  )
  return Promise.resolve()
}
