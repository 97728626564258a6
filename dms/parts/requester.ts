/**
 * The requester's parts, built only by a node that plays it (its code loaded then): the
 * orchestrator (jobs an earlier process left carry on from their snapshots), its metrics, the
 * queues, the workflows.
 */
import { KeyPair } from '../../actors/identity.js'
import type { ApprovalClient } from '../contract-clients/approval-client.js'
import { child } from '../log.js'
import { jobsPort, workflowJobsPort } from '../node-adapters.js'
import { requesterMetrics } from '../node-metrics.js'
import { need, partOf, type NodePartFactory } from './components.js'

export const orchestratorPart: NodePartFactory = async (c) => {
  const r = c.config.requester
  if (r === undefined) return undefined
  const { system, transport, key, db, clock, log, blobs } = need(
    c,
    'system',
    'transport',
    'key',
    'db',
    'blobs',
  )
  const { Orchestrator } = await import('../orchestrator/orchestrator.js')
  const orchestrator = new Orchestrator(
    {
      system,
      transport,
      key,
      db,
      clock,
      log: child(log, 'dms:orchestrator'),
      blobs,
      approval: c.approvals.get(r.contractDb.peer) as ApprovalClient,
      killInState: c.testHooks?.killInState,
    },
    r,
  )
  return partOf('orchestrator', orchestrator, { orchestrator }, { stopOnFailedStart: true })
}

/** The requester's metrics: each stored change of a job, after one read of the store. */
export const requesterMetricsPart: NodePartFactory = (c) => {
  if (c.orchestrator === undefined) return undefined
  const { metrics, orchestrator } = need(c, 'metrics', 'orchestrator')
  const feed = requesterMetrics(metrics, orchestrator)
  return partOf('requester metrics', { start: () => feed.scan(), stop: () => feed.stop() })
}

export const queuesPart: NodePartFactory = async (c) => {
  const r = c.config.requester
  if (r === undefined) return undefined
  const { db, clock, log, orchestrator } = need(c, 'db', 'orchestrator')
  const { QueueBook } = await import('../orchestrator/queues/queue-book.js')
  const queues = new QueueBook(
    { db, clock, log: child(log, 'dms:queues'), jobs: orchestrator.forQueues() },
    { idleExpirySeconds: r.queueIdleExpirySeconds },
  )
  return partOf('queues', queues, { queues })
}

/**
 * After the jobs: a restored workflow reads its tasks' jobs as they are now. A new workflow's
 * escrow plan is checked against this requester's balance at its contract-db.
 */
export const workflowsPart: NodePartFactory = async (c) => {
  const r = c.config.requester
  if (r === undefined) return undefined
  const { db, clock, log, orchestrator, system, blobs } = need(c, 'db', 'orchestrator', 'system', 'blobs')
  const [{ outputsFetchOf }, { WorkflowRunner }, { ContractDbClient }] = await Promise.all([
    import('../orchestrator/config.js'),
    import('../workflows/runner.js'),
    import('../contract-clients/client.js'),
  ])
  const balanceActor = system.spawn('workflows', KeyPair.generate())
  const cdb = new ContractDbClient(
    { actor: balanceActor, clock },
    { contractDb: r.contractDb, timeoutMs: r.requestTimeoutMs, attempts: 2 },
  )
  const workflows = new WorkflowRunner(
    {
      db,
      clock,
      log: child(log, 'dms:workflows'),
      jobs: workflowJobsPort(orchestrator, { system, blobs, clock, ...outputsFetchOf(r) }),
      blobs: blobs.store,
      balance: async () => (await cdb.balance()).balance,
    },
    { maxTasks: r.maxWorkflowTasks },
  )
  return partOf(
    'workflows',
    {
      start: () => workflows.start(),
      stop: () => {
        workflows.stop()
        balanceActor.stop()
      },
    },
    { workflows },
  )
}

/** Workers, the function table and actions (specs/functions.md): actions run as this requester's jobs. */
export const functionsPart: NodePartFactory = async (c) => {
  if (c.config.requester === undefined) return undefined
  const { db, clock, orchestrator, queues, blobs, metrics } = need(
    c,
    'db',
    'orchestrator',
    'queues',
    'blobs',
    'metrics',
  )
  const [{ Functions }, { mirroredCounter }] = await Promise.all([
    import('../functions/functions.js'),
    import('../metrics/counts.js'),
  ])
  const functions = new Functions({ db, clock, blobs: blobs.store, jobs: jobsPort(orchestrator, queues) })
  mirroredCounter(
    metrics.registry,
    'dms_actions_total',
    'requester: actions posted, by outcome: hit (a verified result answered, nothing run), miss (posted as a job), joined (its live job answered)',
    'outcome',
    () => {
      const n = functions.actions.counts
      return { hit: n.hits, miss: n.misses, joined: n.joined }
    },
  )
  return partOf('functions', functions, { functions })
}
