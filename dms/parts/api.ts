/** The REST API on the node's socket (and TCP listener), its ports made from the started parts. */
import { join } from 'node:path'
import { ApiServer } from '../api/server.js'
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
