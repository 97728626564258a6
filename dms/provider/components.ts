/** What the provider is built over (`new ProviderService(components, init)`). */
import type { EventEmitter } from 'node:events'
import type { Logger } from 'pino'
import type { Clock } from '../../actors/clock.js'
import type { KeyPair } from '../../actors/identity.js'
import type { ActorSystem } from '../../actors/system.js'
import type { Transport } from '../../actors/transport.js'
import type { BlobService } from '../blobs/service.js'
import type { ApprovalCredential } from '../contracts/model.js'
import type { Runner } from '../executor/engine.js'
import type { ResourceLedger } from '../resources/ledger.js'
import type { MachineInfo } from '../resources/types.js'
import type { Db } from '../store/db.js'

export interface ProviderComponents {
  system: ActorSystem
  /** Tells the capacity news who joins CAPACITY_TOPIC (a requester new here hears what is free). */
  transport?: Pick<Transport, 'onTopicJoin'>
  key: KeyPair
  ledger: ResourceLedger
  /**
   * The machine measurement (cached). A provider whose container engine is unavailable declines
   * every bid request with "engine <name> unavailable" (engine-choice.ts). Not given: engines are not checked, and bids name none.
   */
  machine?: { get(): Promise<MachineInfo>; refresh(): Promise<MachineInfo> }
  executor: Runner
  db: Db
  clock: Clock
  log: Logger
  /** The node's blobs: job inputs fetched from requesters, output archives served to them. */
  blobs: BlobService
  /** Holds the staged inputs of running allocations (`inputs/<allocationId>/`). */
  workDir: string
  /**
   * This node's approval credential from `contractDb`, attached to its bids and declines.
   * Without one the provider stays silent (specs/protocol.md, "Approval"). `events` says
   * `renewed` at each new credential (capacity news is sent then).
   */
  approval: { current(): ApprovalCredential | undefined; events?: Pick<EventEmitter, 'on' | 'off'> }
}
