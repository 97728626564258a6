import { chmod, rm } from 'node:fs/promises'
import Fastify, { type FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import { InvalidJobSpecError, parseJobSpec } from '../orchestrator/job-spec.js'
import type { DmsNode } from '../node.js'
import { JobEndedError, JobNotFoundError } from '../orchestrator/orchestrator.js'
import { BID_REQUEST_TOPIC } from '../messages.js'
import { dataRoutes } from './data-routes.js'
import { resourceRoutes } from './resources-routes.js'

export interface ApiServerInit {
  /** Unix socket path; created with mode 0600. */
  socketPath: string
}

/** JSON error body: a stable code and a message a person can act on. */
export interface ApiError {
  error: { code: string; message: string; field?: string }
}

const apiError = (code: string, message: string, field?: string): ApiError => ({
  error: { code, message, field },
})

/**
 * The node's REST API on a local unix socket (mode 0600). Spec: specs/rest-api.md.
 */
export class ApiServer {
  private app?: FastifyInstance

  constructor(
    private readonly c: { node: DmsNode; log: Logger },
    private readonly init: ApiServerInit,
  ) {}

  get socketPath(): string {
    return this.init.socketPath
  }

  async start(): Promise<void> {
    if (this.app !== undefined) return
    const app = Fastify({ logger: false, bodyLimit: 8 * 1024 * 1024 })
    this.routes(app)
    await rm(this.init.socketPath, { force: true })
    await app.listen({ path: this.init.socketPath })
    await chmod(this.init.socketPath, 0o600)
    this.app = app
  }

  async stop(): Promise<void> {
    await this.app?.close()
    this.app = undefined
  }

  private routes(app: FastifyInstance): void {
    const { node } = this.c
    app.setErrorHandler((err: { statusCode?: number; code?: string; message: string }, _req, reply) => {
      const status = err.statusCode ?? 500
      if (status >= 500) this.c.log.error({ err }, 'api error')
      void reply
        .status(status)
        .send(apiError(err.code ?? (status >= 500 ? 'INTERNAL' : 'BAD_REQUEST'), err.message))
    })
    app.setNotFoundHandler((req, reply) => {
      void reply.status(404).send(apiError('NOT_FOUND', `no route ${req.method} ${req.url}`))
    })

    void app.register(resourceRoutes, { onboarding: () => node.onboarding })
    void app.register(dataRoutes, { blobs: () => node.blobs, orchestrator: () => node.orchestrator })

    app.get('/v1/health', (_req, reply) => reply.send({ ok: true }))
    app.get('/v1/info', (_req, reply) =>
      reply.send({
        peerId: node.peerId,
        addrs: node.addrs(),
        roles: {
          requester: node.orchestrator !== undefined,
          provider: node.provider !== undefined,
        },
        bidTopicPeers: node.transport.topicPeers(BID_REQUEST_TOPIC),
        rejections: node.system.rejections,
        late: node.system.late,
      }),
    )

    const requester = () => {
      if (node.orchestrator === undefined)
        throw Object.assign(
          new Error('this node is not a requester (no "requester" section in its config)'),
          {
            statusCode: 409,
            code: 'NOT_A_REQUESTER',
          },
        )
      return node.orchestrator
    }

    app.post('/v1/jobs', async (req, reply) => {
      const orch = requester()
      let job
      try {
        // post() refuses an input naming a blob this node does not have, like a bad field.
        job = await orch.post(parseJobSpec(req.body))
      } catch (err) {
        if (err instanceof InvalidJobSpecError)
          return reply.status(400).send(apiError(err.code, err.message, err.field))
        throw err
      }
      return reply.status(201).send({ id: job.record.id, state: job.state })
    })

    app.get('/v1/jobs', async () => {
      const jobs = await requester().list()
      return {
        jobs: jobs.map((j) => ({
          id: j.record.id,
          name: j.record.spec.name,
          state: j.state,
          createdAt: j.record.createdAt,
        })),
      }
    })

    app.get<{ Params: { id: string } }>('/v1/jobs/:id', async (req, reply) => {
      const job = await requester().get(req.params.id)
      if (job === undefined)
        return reply.status(404).send(apiError('JOB_NOT_FOUND', `no job ${req.params.id}`))
      return { state: job.state, ...job.record }
    })

    // Cancel (specs/rest-api.md): 202 once the machine took the cancel; the job ends `cancelled`.
    app.delete<{ Params: { id: string } }>('/v1/jobs/:id', async (req, reply) => {
      try {
        const job = await requester().cancel(req.params.id)
        return reply.status(202).send({ id: job.record.id, state: job.state })
      } catch (err) {
        if (err instanceof JobNotFoundError) return reply.status(404).send(apiError(err.code, err.message))
        if (err instanceof JobEndedError) return reply.status(409).send(apiError(err.code, err.message))
        throw err
      }
    })
  }
}
