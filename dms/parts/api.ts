/**
 * The node's faces: the REST API on its socket (and TCP listener), its ports made from the
 * started parts; the metrics listener, with a token of its own.
 */
import { join } from 'node:path'
import { ApiServer } from '../api/server.js'
import { MetricsListener } from '../metrics/listener.js'
import { BlobUploads } from '../blobs/uploads.js'
import { child } from '../log.js'
import { apiPorts } from '../node-adapters.js'
import { need, partOf, type NodePartFactory } from './components.js'

export const apiPart: NodePartFactory = (c) => {
  const cfg = c.config
  if (cfg.api === false) return undefined
  const { host, transport, system, blobs, payloadRefusals, metrics, clock, log } = need(
    c,
    'host',
    'transport',
    'system',
    'blobs',
    'payloadRefusals',
    'metrics',
  )
  const ports = apiPorts({
    peerId: transport.peerId,
    addrs: c.addrs,
    host,
    transport,
    system,
    blobs,
    uploads: new BlobUploads(
      { store: blobs.store, clock },
      { idleMs: cfg.api?.uploadIdleMs, maxInFlightBytes: cfg.api?.uploadsMaxBytes },
    ),
    approvals: c.approvals,
    payloadRefusals,
    metrics,
    orchestrator: c.orchestrator,
    queues: c.queues,
    requestStop: c.requestStop,
    workflows: c.workflows,
    functions: c.functions,
    provider: c.provider,
    ...(c.meter !== undefined ? { engines: () => c.meter?.last()?.engines } : {}),
    onboarding: c.onboarding,
  })
  const api = new ApiServer(
    { ports, log: child(log, 'dms:api') },
    {
      socketPath: cfg.api?.socket ?? join(cfg.dataDir, 'dms.sock'),
      tcp: cfg.api?.tcp,
      tokenPath: join(cfg.dataDir, 'api-token'),
    },
  )
  return partOf('api', api, { api })
}

/** `GET /metrics` alone on a listener of its own, to a read-only token (config `metrics`). */
export const metricsListenerPart: NodePartFactory = (c) => {
  const cfg = c.config.metrics
  if (cfg === undefined) return undefined
  const { metrics } = need(c, 'metrics')
  const metricsListener = new MetricsListener(metrics, {
    ...cfg,
    tokenPath: join(c.config.dataDir, 'metrics-token'),
  })
  return partOf('metrics listener', metricsListener, { metricsListener })
}
