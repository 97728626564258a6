/**
 * The node's components: what its parts are built over. The process gives the first few
 * (`NodeComponents`: clock, log, passphrase, test hooks...); each part started adds what it
 * provides for the parts after it (the list in dms/node.ts).
 */
import type { Logger } from 'pino'
import type { Clock } from '../../actors/clock.js'
import { DmsError } from '../../actors/errors.js'
import type { KeyPair } from '../../actors/identity.js'
import type { Part, PartFactory } from '../../actors/lifecycle.js'
import type { ActorSystem } from '../../actors/system.js'
import type { NodeMetrics } from '../api/metrics/node-metrics.js'
import type { MetricsListener } from '../metrics/listener.js'
import type { ApiServer } from '../api/server.js'
import type { BlobService } from '../blobs/service.js'
import type { NodeConfig } from '../config.js'
import type { ApprovalClient } from '../contract-clients/approval-client.js'
import type { Engine } from '../executor/engine.js'
import type { Functions } from '../functions/functions.js'
import type { PassphraseSource } from '../keys.js'
import type { Host } from '../network/host.js'
import type { Libp2pTransport } from '../network/transport.js'
import type { Upkeep } from '../network/upkeep.js'
import type { Orchestrator } from '../orchestrator/orchestrator.js'
import type { QueueBook } from '../orchestrator/queues/queue-book.js'
import type { ProcessFaults } from '../process-guard.js'
import type { ProviderService } from '../provider/provider.js'
import type { ResourceLedger } from '../resources/ledger.js'
import type { MachineMeter } from '../resources/measure.js'
import type { Onboarding } from '../resources/onboarding.js'
import type { Db } from '../store/db.js'
import type { WorkflowRunner } from '../workflows/runner.js'
import type { TestHooks } from '../test-hooks.js'

/** What the process gives a node (`new DmsNode(config, components)`). */
export interface NodeComponents {
  clock?: Clock
  log?: Logger
  /** Overrides the Docker executor (benchmarks and tests only). */
  executor?: Engine
  /** Unseals the node key. @default DMS_PASSPHRASE from the environment */
  passphrase?: PassphraseSource
  /** Errors caught by the process's last-resort guard (`dms run`), shown in /metrics. */
  faults?: ProcessFaults
  /**
   * Fault points for the restore tests and the chaos run, read from the environment by the
   * process entry only (`dms run`, test-hooks.ts). @default none
   */
  testHooks?: TestHooks
  /**
   * Called when the node asks to be stopped (`dms drain --stop` once drained): `dms run` stops
   * gracefully and exits. @default the node stops itself
   */
  onStopRequest?: () => void
}

/** Every component of a node: what it was given, then what each started part provides. */
export interface Components extends Omit<NodeComponents, 'clock' | 'log' | 'passphrase' | 'onStopRequest'> {
  config: NodeConfig
  clock: Clock
  log: Logger
  passphrase: PassphraseSource
  /** Asks for the node to be stopped (`dms drain --stop`). */
  requestStop: () => void
  /** This node's listen addresses, each with its `/p2p/<peer id>`. */
  addrs: () => string[]
  /**
   * This node's approval credentials, by contract-db peer id (one per contract-db its roles
   * name): attached to bid requests, bids and declines (specs/contract-db.md).
   */
  approvals: Map<string, ApprovalClient>
  // Provided by the peer base:
  db?: Db
  key?: KeyPair
  host?: Host
  transport?: Libp2pTransport
  system?: ActorSystem
  upkeep?: Upkeep
  /** Payloads refused at decode, by behaviour and reason (`dms_payloads_refused_total`). */
  payloadRefusals?: Record<string, Record<string, number>>
  onPayloadRefused?: (fn: (behaviour: string, reason: string) => void) => () => void
  metrics?: NodeMetrics
  blobs?: BlobService
  // The provider's:
  ledger?: ResourceLedger
  meter?: MachineMeter
  onboarding?: Onboarding
  provider?: ProviderService
  // The requester's:
  orchestrator?: Orchestrator
  queues?: QueueBook
  workflows?: WorkflowRunner
  functions?: Functions
  api?: ApiServer
  metricsListener?: MetricsListener
}

/** One part of a node. */
export type NodePart = Part<Components>

/** Builds one part of a node over the components of the parts before it. */
export type NodePartFactory = PartFactory<Components>

/** A component asked for before the part that provides it started (or a node not started). */
export class MissingComponentError extends DmsError<{ component: string }> {
  constructor(component: string) {
    super(
      'MISSING_COMPONENT',
      `no ${component} yet: is its part earlier in the list, and the node started?`,
      {
        component,
      },
    )
  }
}

/** The components a part needs, checked present (a list in the wrong order fails at once). */
export function need<K extends keyof Components>(
  c: Components,
  ...keys: K[]
): Components & Required<Pick<Components, K>> {
  for (const k of keys) if (c[k] === undefined) throw new MissingComponentError(String(k))
  return c as Components & Required<Pick<Components, K>>
}

/**
 * A part over something with `start` and `stop` (either may be sync); with `stopOnFailedStart`,
 * a start that throws stops it before the error goes on.
 */
export function partOf(
  name: string,
  s: { start(): unknown; stop(): unknown },
  provides?: Partial<Components>,
  opts: { stopOnFailedStart?: boolean } = {},
): NodePart {
  return {
    name,
    provides,
    start: async () => {
      try {
        await s.start()
      } catch (err) {
        if (opts.stopOnFailedStart === true) await s.stop()
        throw err
      }
    },
    stop: async () => {
      await s.stop()
    },
  }
}
