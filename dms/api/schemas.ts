/**
 * The REST API's request and reply shapes, declared once (TypeBox): Fastify validates requests
 * with them (ajv), the routes and ports take their types from them (`Static<>`), and the OpenAPI
 * document (dms/api/openapi.ts) shows them. Replies are documented, not enforced (specs/rest-api.md).
 * One file per route group under schemas/ (their shorthands in schemas/common.ts); this file is
 * the one place the routes, the ports and the composition root import them from.
 * The job spec (dms/orchestrator/job-spec.ts) and the onboarding request
 * (dms/resources/onboard-request.ts) are declared next to the code that checks them.
 */
export { ErrorReply, isSet, type ApiError } from './schemas/common.js'
export * from './schemas/jobs.js'
export * from './schemas/data.js'
export * from './schemas/queues.js'
export * from './schemas/workflows.js'
export * from './schemas/provider.js'
export * from './schemas/node.js'
export * from './schemas/functions.js'
