/**
 * One job running here, built from the requester's shared parts: its session (what arrives for
 * it), its own actor (job-inbox.ts), a contract-db client sending as that actor, its steps over
 * those (steps/) and its machine (job-machine.ts, one per clock: shared-job-machine.ts), created but not started (job-store.ts starts
 * it with every transition persisted).
 */
import type { Logger } from 'pino'
import { createActor, type Snapshot } from 'xstate'
import type { Clock } from '../../actors/clock.js'
import type { KeyPair } from '../../actors/identity.js'
import type { Actor, ActorSystem } from '../../actors/system.js'
import type { BlobService } from '../blobs/service.js'
import { ContractDbClient } from '../contract-clients/client.js'
import type { JobLog, JobUpdate } from '../protocol/messages.js'
import type { BidAdmission } from './bid-admission.js'
import type { BidAudience } from './bid-audience.js'
import { jobBlobsOf } from './data-plane.js'
import { spawnJobActor } from './job-inbox.js'
import { bindJobSteps, jobMachineFor } from './shared-job-machine.js'
import type { JobId, JobRecord } from './job-record.js'
import type { JobMachineActor } from './job-store.js'
import { JobSession } from './session.js'
import { jobSteps, type StepDeps } from './steps/index.js'
import type { JobConfig } from './config.js'

/** What every job of a requester shares. */
export interface JobParts {
  system: Pick<ActorSystem, 'spawn' | 'peerId'>
  transport: StepDeps['transport']
  key: KeyPair
  clock: Clock
  log: Logger
  blobs: BlobService
  approval: StepDeps['approval']
  funds: StepDeps['funds']
  audience: BidAudience
  capacity: StepDeps['capacity']
  admission: BidAdmission
  /** This requester's reliability record of a provider (provider-records.ts). */
  reliability: StepDeps['reliability']
  contractDb: { peer: string; addrs: string[] }
  /** Resolves once every transition of job `id` so far is stored (job-store.ts `written`). */
  written?: (id: JobId) => Promise<void>
  config: JobConfig
  onUpdate: (jobId: JobId, update: JobUpdate) => void
  onLog: (jobId: JobId, log: JobLog) => void
}

export interface RunningJob {
  machine: JobMachineActor
  session: JobSession
  actor: Actor
}

/** Builds job `record`'s parts and machine (restored from `snapshot` when given). */
export function createRunningJob(record: JobRecord, snapshot: unknown, p: JobParts): RunningJob {
  const { id } = record
  const { clock, log } = p
  const session = new JobSession(clock)
  const actor = spawnJobActor(id, {
    system: p.system,
    clock,
    log,
    admission: p.admission,
    session,
    view: () => {
      // Called on arrivals only, once the machine below exists.
      const snap = machine.getSnapshot()
      return { state: snap.value, record: snap.context }
    },
    onUpdate: (u) => p.onUpdate(id, u),
    onLog: (l) => p.onLog(id, l),
  })
  const contractDb = new ContractDbClient(
    { actor, clock },
    { contractDb: p.contractDb, timeoutMs: p.config.requestTimeoutMs, attempts: p.config.settleAttempts },
  )
  const steps = jobSteps({
    clock,
    log,
    actor,
    session,
    contractDb,
    blobs: jobBlobsOf(actor, p.blobs, { key: p.key, peerId: p.system.peerId, now: () => clock.now() }),
    transport: p.transport,
    approval: p.approval,
    funds: p.funds,
    audience: p.audience,
    capacity: p.capacity,
    reliability: p.reliability,
    key: p.key,
    peerId: p.system.peerId,
    config: p.config,
    ...(p.written !== undefined ? { written: () => p.written!(id) } : {}),
  })
  const machine: JobMachineActor = createActor(jobMachineFor(clock), {
    clock,
    input: record,
    ...(snapshot !== undefined ? { snapshot: snapshot as Snapshot<unknown> } : {}),
  })
  bindJobSteps(machine, steps)
  return { machine, session, actor }
}
