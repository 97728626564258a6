/**
 * The provider's handlers over a real bid book, machine and resource ledger (level in a temp dir),
 * with fake runs (provider-fakes.ts), a ManualClock, real keys and signatures, and a fake actor
 * that records what the provider sends. Messages are built as the actor runtime delivers them.
 */
import { forTerms } from './workload.js'
import { workloadHash } from '../../dms/workload/hash.js'
import type { Workload } from '../../dms/workload/workload.js'
import { EventEmitter } from 'node:events'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ManualClock } from '../../actors/clock.js'
import type { Handle } from '../../actors/envelope.js'
import type { Actor, Message } from '../../actors/system.js'
import { issueApproval } from '../../dms/contracts/approval.js'
import { issueFunds } from '../../dms/contracts/funds.js'
import { hashDoc, signDoc } from '../../dms/contracts/canonical.js'
import { DOMAIN, type Bid, type ContractProof, type SignedContract } from '../../dms/contracts/model.js'
import { partyOf } from '../../dms/contracts/party.js'
import { contractedFor } from '../../dms/contracts/terms.js'
import { silentLogger } from '../../dms/log.js'
import type { Logger } from '../../dms/log.js'
import { BidRequestGate } from '../../dms/provider/bid-request-gate.js'
import type { PeerRateLimitInit } from '../../dms/provider/rate-limit.js'
import type { BidBook } from '../../dms/provider/bid-book.js'
import {
  bidRequestHandler,
  type BidRequestCounters,
  type BidRequestDeps,
  type BidRequestInit,
} from '../../dms/provider/handlers/bid-request.js'
import type { BidTiming } from '../../dms/provider/bid-machine.js'
import type { BidRequest, Invocation } from '../../dms/protocol/messages.js'
import { ResourceLedger } from '../../dms/resources/ledger.js'
import { openDb, type Db } from '../../dms/store/db.js'
import { newParty, type Who } from './contracts.js'
import { Fakes, TIMING, testBook } from './provider-fakes.js'
import { plainNeeds } from './needs.js'

const MiB = 1024 * 1024

export interface Sent {
  to: Handle
  behaviour: string
  payload: unknown
}

export class Harness {
  readonly clock = new ManualClock()
  readonly requester = newParty()
  readonly stranger = newParty()
  readonly provider = newParty()
  readonly contractDb = newParty()
  readonly events = new EventEmitter()
  readonly counts: BidRequestCounters = { declines: {}, ignored: {} }
  /** What the provider actor sent, in order. */
  readonly sent: Sent[] = []
  /** When set, sends fail with it. */
  failSends?: Error
  readonly actor = {
    send: (to: Handle, def: { name: string }, payload: unknown) => {
      if (this.failSends !== undefined) return Promise.reject(this.failSends)
      this.sent.push({ to, behaviour: def.name, payload })
      return Promise.resolve()
    },
  } as unknown as Actor
  fakes!: Fakes
  book!: BidBook
  ledger!: ResourceLedger
  private db!: Db
  private dir!: string
  private closeBook!: () => Promise<void>
  private timing: BidTiming = TIMING

  /** A ledger offering 1 cpu, 1 GiB memory and 2 GiB disk, and the book over it. */
  async start(opts: { timing?: BidTiming } = {}): Promise<this> {
    this.dir = await mkdtemp(join(tmpdir(), 'dms-handlers-'))
    this.db = await openDb(join(this.dir, 'db'))
    this.ledger = new ResourceLedger({ db: this.db, clock: this.clock, log: silentLogger })
    await this.ledger.start()
    await this.ledger.setOffer({
      resources: { cpu: 1, memoryBytes: 1024 * MiB, diskBytes: 2048 * MiB, gpus: 0 },
      prices: { perCpuHour: 1000, perGiBMemoryHour: 10, perGiBDiskHour: 0, perGpuHour: 0, minJobPrice: 1 },
      onboardedAt: this.clock.now(),
    })
    this.timing = opts.timing ?? TIMING
    await this.startBook()
    return this
  }

  /** A provider restart: the bid book and the ledger stopped, then restored from the database. */
  async restart(): Promise<void> {
    await this.closeBook()
    await this.ledger.stop()
    this.ledger = new ResourceLedger({ db: this.db, clock: this.clock, log: silentLogger })
    await this.ledger.start()
    await this.startBook()
  }

  private async startBook(): Promise<void> {
    this.fakes = new Fakes(this.ledger)
    const t = await testBook(this.clock, this.fakes, { db: this.db, dir: this.dir, timing: this.timing })
    this.book = t.book
    this.closeBook = () => t.close()
  }

  async close(): Promise<void> {
    await this.closeBook()
    await this.ledger.stop()
    await this.db.close()
    await rm(this.dir, { recursive: true, force: true })
  }

  handleOf(who: Who, inbox = 'job/job-1'): Handle {
    return { publicKey: who.key.publicKey as Handle['publicKey'], peer: who.peer, inbox, addrs: [] }
  }

  /** A message from `who` as the actor runtime hands it to a behaviour. */
  msg<T>(payload: T, who: Who = this.requester, inbox?: string): Message<T> {
    return { behaviour: 'test', from: this.handleOf(who, inbox), payload, peer: who.peer, via: 'direct' }
  }

  /** The bid-request handler as the provider runs it. */
  bidRequest(
    init: Partial<BidRequestInit> & {
      bidRequestRate?: PeerRateLimitInit
      /** The image check (default: every image is fine and runnable). */
      images?: { refusal: (image: string) => string | undefined; canRun: (image: string) => Promise<boolean> }
      /** The machine measurement, with its engines (default: none, so no engine is checked). */
      machine?: BidRequestDeps['machine']
      /** The provider's log (default: silent). */
      log?: Logger
    } = {},
  ) {
    const { images, machine, log, ...rest } = init
    const handle = bidRequestHandler(
      {
        key: this.provider.key,
        ledger: this.ledger,
        book: this.book,
        clock: this.clock,
        log: log ?? silentLogger,
        approval: { current: () => this.approval(this.provider) },
        machine,
        peerId: () => this.provider.peer,
        events: this.events,
        images: images ?? { refusal: () => undefined, canRun: () => Promise.resolve(true) },
        gate: new BidRequestGate(
          { clock: this.clock, log: silentLogger, events: this.events, ignored: this.counts.ignored },
          { contractDb: this.contractDb.peer, bidRequestRate: rest.bidRequestRate },
        ),
      },
      { contractDb: this.contractDb.peer, ...rest },
      this.counts,
    )
    return (msg: Message<BidRequest>) => handle(this.actor, msg)
  }

  approval(who: Who) {
    return issueApproval(this.contractDb.key, {
      peer: who.peer,
      contractDb: this.contractDb.peer,
      now: this.clock.now(),
    })
  }

  /** `who`'s funds proof from the contract-db, stating `available`. */
  funds(who: Who, available = 1_000_000_000) {
    return issueFunds(this.contractDb.key, {
      peer: who.peer,
      contractDb: this.contractDb.peer,
      available,
      now: this.clock.now(),
    })
  }

  request(jobId = 'job-1', cpu = 0.5, who: Who = this.requester): BidRequest {
    return {
      jobId,
      workloadNeeds: plainNeeds('dms-test:1', { cpu, memoryBytes: 64 * MiB }),
      maxDurationSeconds: 60,
      maxPrice: 1_000_000,
      deadline: this.clock.now() + 3000,
      exclude: [],
      approval: this.approval(who),
      funds: this.funds(who),
    }
  }

  /** The bids the provider sent so far. */
  bids(): Bid[] {
    return this.sent.filter((s) => s.behaviour === '/dms/job/bid').map((s) => (s.payload as { bid: Bid }).bid)
  }

  /** A bid made through the bid-request handler, for `who`. */
  async bid(jobId = 'job-1', cpu = 0.25, who: Who = this.requester): Promise<Bid> {
    await this.bidRequest()(this.msg(this.request(jobId, cpu, who), who, `job/${jobId}`))
    const bid = this.bids().find((b) => b.jobId === jobId)
    if (bid === undefined)
      throw new Error(`no bid for ${jobId}: ${JSON.stringify(this.sent.at(-1)?.payload)}`)
    return bid
  }

  /**
   * The requester's signed terms for `bid`, signing `workload` (`false`: terms of an earlier
   * version, which sign none and copy the bid's resources, image and max duration).
   * @default the workload `invocation` sends
   */
  contract(
    bid: Bid,
    who: Who = this.requester,
    workload: Workload | false = defaultWorkload(bid),
  ): SignedContract {
    const terms = {
      contractId: `contract-${bid.bidId}`,
      jobId: bid.jobId,
      bidId: bid.bidId,
      requester: partyOf(who.peer, who.key.publicKey),
      provider: partyOf(this.provider.peer, this.provider.key.publicKey),
      contractDb: this.contractDb.peer,
      ...(workload === false
        ? { resources: bid.resources, image: bid.image, maxDurationSeconds: bid.maxDurationSeconds }
        : { workloadHash: workloadHash(workload) }),
      escrow: bid.total,
      bid,
      createdAt: this.clock.now(),
      expiresAt: this.clock.now() + 60_000,
    }
    return { terms, requesterSignature: signDoc(who.key, DOMAIN.contract, terms) }
  }

  /** The contract-db's proof over countersigned terms. */
  proof(contract: SignedContract): ContractProof {
    const body = {
      contractId: contract.terms.contractId,
      termsHash: hashDoc(contract.terms),
      escrowLocked: contract.terms.escrow,
      issuedAt: this.clock.now(),
      contractDb: this.contractDb.peer,
    }
    return { ...body, signature: signDoc(this.contractDb.key, DOMAIN.proof, body) }
  }

  invocation(contract: SignedContract, over: Partial<Invocation> = {}): Invocation {
    return {
      contract,
      proof: this.proof(contract),
      inputs: [],
      workload: defaultWorkload(contractedFor(contract.terms)),
      ...over,
    }
  }
}

/** What `Harness.invocation` runs by default, and `Harness.contract` signs: `sh -c 'echo hi'`. */
export const defaultWorkload = (terms: Parameters<typeof forTerms>[0]): Workload =>
  forTerms(terms, ['sh', '-c', 'echo hi'])
