/**
 * What the requester's steps use, declared once: each step is a factory over the few of these it
 * needs (`Pick<StepDeps, ...>`), so a test gives it fakes on a simulated clock. One set per job:
 * the actor, the session and the contract-db client are the job's own.
 */
import type { Logger } from 'pino'
import type { Clock } from '../../../actors/clock.js'
import type { BehaviourDef } from '../../../actors/codec.js'
import type { Handle } from '../../../actors/envelope.js'
import type { KeyPair } from '../../../actors/identity.js'
import type { RequestOptions, SendOptions } from '../../../actors/system.js'
import type { PeerIdStr } from '../../../actors/transport.js'
import type { TransferPace } from '../../blobs/transfer.js'
import type { ContractDbClient } from '../../contract-clients/client.js'
import type { ApprovalCredential, FundsProof } from '../../contracts/model.js'
import type { Resources } from '../../resources/types.js'
import type { BidAudience } from '../bid-audience.js'
import type { JobBlobs } from '../data-plane.js'
import type { JobSession } from '../session.js'

/** The job's actor as the steps use it: typed sends, requests and broadcasts. */
export interface JobActor {
  request<Req, Rep>(
    to: Handle,
    behaviour: BehaviourDef<Req, Rep>,
    payload: Req,
    opts?: RequestOptions,
  ): Promise<Rep>
  send<Req>(
    to: Handle,
    behaviour: BehaviourDef<Req, unknown>,
    payload: Req,
    opts?: SendOptions,
  ): Promise<void>
  publish<Req>(
    topic: string,
    behaviour: BehaviourDef<Req, unknown>,
    payload: Req,
    ttlMs?: number,
  ): Promise<void>
}

/** The bid-request topic as the transport sees it: who is subscribed. */
export interface BidTopic {
  topicSubscribers(topic: string): PeerIdStr[]
  waitForTopicPeers(topic: string, n: number, options?: { signal?: AbortSignal }): Promise<void>
}

/** This node's approval credential from its contract-db (attached to every bid request). */
export interface Approvals {
  current(): ApprovalCredential | undefined
  ready(timeoutMs: number, signal?: AbortSignal): Promise<ApprovalCredential>
}

/**
 * This requester's funds proof from its contract-db (FundsClient), carried in every bid request:
 * providers reserve nothing for a job whose max price it does not cover.
 */
export interface Funds {
  /** A valid proof, asked again when it states less than `need` (it may still state less). */
  proofFor(need: number, signal?: AbortSignal): Promise<FundsProof>
  current(): FundsProof | undefined
}

/** The steps' settings (OrchestratorInit, defaults applied). */
export interface StepConfig {
  /** Longest bid window. */
  bidWindowMs: number
  /** Close the window early once this many bids are in. */
  enoughBids: number
  /** Providers asked first, directly, when more than twice as many are subscribed (bid-sample.ts); 0 = everyone on gossip. */
  bidSample: number
  /** Bid requests published (1 s, 2 s... apart) while some providers stay silent. */
  publishAttempts: number
  /** Per-request timeout for lock, contract, invocation, cancel. */
  requestTimeoutMs: number
  /** Grace after the max duration before a silent provider is given up. */
  resultGraceMs: number
  /** A running job's provider silent this long is dropped (provider fault). */
  livenessTimeoutMs: number
  /** The slowest output archive fetch accepted: its deadline (specs/data-plane.md). */
  outputsPace: TransferPace
  /** First wait of a queued job before it bids again without capacity news (doubles per round). */
  queueRetryMinMs: number
  /** Longest such wait. */
  queueRetryMaxMs: number
  /** A contract's startBy = max(its draft, the bid's earliestStart) + this (specs/contract-db.md). */
  startGraceSeconds: number
}

/**
 * Capacity news as a queued job waits on it (capacity-board.ts): resolves with who announced
 * room that could fit `resources` (`capacity <peer id>`); rejects when `signal` aborts.
 */
export interface CapacityWaits {
  wait(jobId: string, resources: Resources, signal: AbortSignal): Promise<string>
}

export interface StepDeps {
  clock: Clock
  log: Logger
  /** The job's actor: every message of the job is sent as it, and its replies come back to it. */
  actor: JobActor
  /**
   * What has arrived for the job (job-inbox.ts): bids, declines, the bidders' addresses, updates,
   * when the provider was last heard from, and the result. The steps read it and wait on it.
   */
  session: JobSession
  /**
   * Resolves once every transition of the job so far is stored. Not given (tests of one step): at
   * once.
   */
  written?: () => Promise<void>
  /** The contract-db client, sending as the job's actor. */
  contractDb: Pick<ContractDbClient, 'peer' | 'verify' | 'settle' | 'terminate'> &
    Partial<Pick<ContractDbClient, 'handle'>>
  /** The job's side of the data plane: input grants, output fetch and check. */
  blobs: JobBlobs
  transport: BidTopic
  approval: Approvals
  funds: Funds
  /** Which providers a bid window waits for (shared by all of the requester's jobs). */
  audience: BidAudience
  /** This requester's reliability record of a provider, 0..1 (provider-records.ts). */
  reliability: (peer: PeerIdStr) => Promise<number>
  /** The node key: contracts and verifications are signed with it. */
  key: KeyPair
  /** This requester's peer id. */
  peerId: PeerIdStr
  config: StepConfig
  /** Wakes queued jobs when a provider announces room. */
  capacity: CapacityWaits
}
