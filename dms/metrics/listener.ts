/**
 * The metrics listener (specs/rest-api.md, "Metrics listener"): a TCP listener of its own that
 * serves `GET /metrics` and nothing else, to a bearer token of its own. A Prometheus server gets
 * this token, never the API's: the API's token can post jobs and so spend escrow, this one can
 * read the metrics and nothing else, whatever it is presented with (every other path is 404).
 * Loopback unless the operator sets `public`.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { chmod, readFile, writeFile } from 'node:fs/promises'
import { isIP, type AddressInfo } from 'node:net'
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify'
import { DmsError } from '../../actors/errors.js'

/** What the listener serves: a role's metrics in the text format. */
export interface MetricsSource {
  readonly contentType: string
  render(): Promise<string>
}

/** `metrics` in a node's or a contract-db's config (specs/config.md). */
export interface MetricsListenerConfig {
  /** An IP address; one that is not loopback needs `public: true`. @default '127.0.0.1' */
  host?: string
  /** 0 picks a free port (9464 is the usual one for an exporter). */
  port: number
  /**
   * The bearer token a scrape must carry (16-256 characters).
   * @default a random token generated into '<dataDir>/metrics-token' (mode 0600) and kept
   */
  token?: string
  /**
   * Serve on an address that is not loopback (`0.0.0.0`, a LAN address): the operator's explicit
   * choice, so that a copied config never exposes a node's metrics by accident. @default false
   */
  public?: boolean
}

export interface MetricsListenerInit extends MetricsListenerConfig {
  /** Where a generated token is kept (mode 0600). */
  tokenPath: string
}

/**
 * A metrics listener that cannot serve, as the operator fixes it (`code` says why): a host that is
 * no IP address, one beyond loopback without `public`, an address the system refuses.
 */
export class MetricsListenerConfigError extends DmsError<{ host: string }> {
  constructor(
    code: 'METRICS_BAD_HOST' | 'METRICS_NOT_LOOPBACK' | 'METRICS_CANNOT_LISTEN',
    host: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(code, message, { host }, options)
  }
}

const OS_REASONS: Partial<Record<string, string>> = {
  EADDRINUSE: 'address in use',
  EADDRNOTAVAIL: 'address not available on this machine',
  EACCES: 'permission denied',
}

const LOOPBACK = (host: string) => host === '::1' || (isIP(host) === 4 && host.startsWith('127.'))

/** Why `c` cannot be served, or undefined. */
export function metricsListenerProblem(c: MetricsListenerConfig): MetricsListenerConfigError | undefined {
  const host = c.host ?? '127.0.0.1'
  if (isIP(host) === 0)
    return new MetricsListenerConfigError(
      'METRICS_BAD_HOST',
      host,
      `metrics.host ${JSON.stringify(host)} is not an IP address (e.g. "127.0.0.1", "::1", "0.0.0.0")`,
    )
  if (!LOOPBACK(host) && c.public !== true)
    return new MetricsListenerConfigError(
      'METRICS_NOT_LOOPBACK',
      host,
      `metrics.host ${host} is reachable from other machines: set "public": true in metrics to serve the metrics there, or use 127.0.0.1`,
    )
  return undefined
}

/** The configured token, else the one kept at `path`, else a new one written there (mode 0600). */
export async function metricsToken(path: string, configured?: string): Promise<string> {
  if (configured !== undefined) return configured
  try {
    const kept = (await readFile(path, 'utf8')).trim()
    if (kept.length >= 16) return kept
  } catch {
    /* none yet */
  }
  const token = randomBytes(32).toString('hex')
  await writeFile(path, `${token}\n`, { mode: 0o600 })
  await chmod(path, 0o600)
  return token
}

const notFound = (req: FastifyRequest, reply: FastifyReply) =>
  reply.status(404).send({
    error: {
      code: 'NOT_FOUND',
      message: `the metrics listener serves GET /metrics only, not ${req.method} ${req.url.slice(0, 200)}`,
    },
  })

const digest = (s: string) => createHash('sha256').update(s).digest()

/** Serves one role's metrics on a listener of their own (see the file's comment). */
export class MetricsListener {
  private app?: FastifyInstance
  /** `host:port` once listening. */
  address?: string
  /** The token a scrape must carry, once started. */
  token?: string

  constructor(
    private readonly source: MetricsSource,
    private readonly init: MetricsListenerInit,
  ) {}

  async start(): Promise<void> {
    if (this.app !== undefined) return
    const problem = metricsListenerProblem(this.init)
    if (problem !== undefined) throw problem
    const token = await metricsToken(this.init.tokenPath, this.init.token)
    // Compared as digests: equal lengths, so the comparison's time says nothing of the token.
    const expected = digest(`Bearer ${token}`)
    const app = Fastify({ logger: false, bodyLimit: 1024 })
    app.addHook('onRequest', async (req, reply) => {
      void reply.header('cache-control', 'no-store').header('x-content-type-options', 'nosniff')
      if (timingSafeEqual(digest(req.headers.authorization ?? ''), expected)) {
        // Anything but a scrape ends here, before a body is read.
        if ((req.method === 'GET' || req.method === 'HEAD') && req.url.split('?')[0] === '/metrics') return
        return notFound(req, reply)
      }
      return reply
        .status(401)
        .header('www-authenticate', 'Bearer')
        .send({
          error: {
            code: 'UNAUTHORIZED',
            message:
              'the metrics listener needs "authorization: Bearer <metrics token>" (see <dataDir>/metrics-token)',
          },
        })
    })
    app.setNotFoundHandler(notFound)
    app.get('/metrics', async (_req, reply) =>
      reply.header('content-type', this.source.contentType).send(await this.source.render()),
    )
    const host = this.init.host ?? '127.0.0.1'
    try {
      await app.listen({ host, port: this.init.port })
    } catch (err) {
      await app.close()
      const code = (err as { code?: string }).code ?? ''
      throw new MetricsListenerConfigError(
        'METRICS_CANNOT_LISTEN',
        host,
        `metrics: cannot listen on ${host}:${this.init.port}: ${OS_REASONS[code] ?? (err as Error).message}`,
        { cause: err },
      )
    }
    const a = app.server.address() as AddressInfo
    this.address = `${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}`
    this.token = token
    this.app = app
  }

  async stop(): Promise<void> {
    await this.app?.close()
    this.app = undefined
  }
}
