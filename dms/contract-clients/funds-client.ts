/**
 * Keeps a requester's funds proof from its contract-db (funds.ts): asked for when a job first
 * needs one, used by every bid request while valid, asked again in the background once past half
 * its lifetime and before it is sent once in its last quarter, and at once when a job's max price is more than the proof states (an account
 * credited a moment ago is seen by the next job; jobs asking at the same time share one ask).
 * Spec: specs/contract-db.md ("Funds proofs").
 */
import type { Logger } from 'pino'
import type { Clock } from '../../actors/clock.js'
import { DmsError } from '../../actors/errors.js'
import { KeyPair } from '../../actors/identity.js'
import type { Actor, ActorSystem } from '../../actors/system.js'
import { ContractDbClient } from './client.js'
import type { FundsProof } from '../contracts/model.js'

/** No funds proof could be had from the contract-db (unreachable, or it refused). */
export class NoFundsProofError extends DmsError {
  constructor(contractDb: string, why: string) {
    super('NO_FUNDS_PROOF', `no funds proof from contract-db ${contractDb}: ${why}`)
  }
}

export interface FundsClientComponents {
  system: Pick<ActorSystem, 'spawn' | 'peerId'>
  clock: Clock
  log: Logger
  /** How a proof is asked for. @default the contract-db's `/dms/account/funds` over `system` */
  askFunds?: (actor: Actor) => Promise<FundsProof>
}

/**
 * A proof with less than this share of its lifetime left is renewed before it is sent, not after:
 * it must outlive its trip and the providers' queues (a loaded provider saw proofs sent with a
 * second left arrive expired, and declined every bid `funds_expired`).
 */
export const RENEW_BEFORE_USE = 0.25

export interface FundsClientInit {
  /** The contract-db: peer id, and addresses to dial (empty: found through the peer store). */
  contractDb: { peer: string; addrs: readonly string[] }
  /** Per-request timeout. @default 10000 */
  requestTimeoutMs?: number
}

export class FundsClient {
  private actor?: Actor
  private proof?: FundsProof
  private inFlight?: Promise<FundsProof>

  constructor(
    private readonly c: FundsClientComponents,
    private readonly init: FundsClientInit,
  ) {}

  /** Starts, and asks for a first proof in the background: held before a job needs it. */
  start(): void {
    if (this.actor !== undefined) return
    this.actor = this.c.system.spawn(`funds/${this.init.contractDb.peer}`, KeyPair.generate())
    void this.ask().catch((err: unknown) => this.c.log.debug({ err }, 'no funds proof yet'))
  }

  stop(): void {
    this.actor?.stop()
    this.actor = undefined
    this.inFlight = undefined
  }

  /** The proof held, while it is valid. */
  current(): FundsProof | undefined {
    const p = this.proof
    return p !== undefined && p.expiresAt > this.c.clock.now() ? p : undefined
  }

  /**
   * A valid proof, asked for first when none is held, or when the one held states less than
   * `need`. The proof returned may still state less than `need`: the caller says what that means
   * for its job.
   * @throws NoFundsProofError when none is held and the contract-db gives none
   */
  async proofFor(need: number, signal?: AbortSignal): Promise<FundsProof> {
    const now = this.c.clock.now()
    const held = this.current()
    if (held !== undefined && held.available >= need) {
      const life = held.expiresAt - held.issuedAt
      if (now < held.expiresAt - life * RENEW_BEFORE_USE) {
        if (now >= held.issuedAt + life / 2) void this.ask().catch(() => undefined)
        return held
      }
    }
    try {
      return await this.ask()
    } catch (err) {
      signal?.throwIfAborted()
      // A renewal that failed leaves the proof held, while it lasts.
      const still = this.current()
      if (still !== undefined) return still
      throw new NoFundsProofError(this.init.contractDb.peer, (err as Error).message)
    }
  }

  /** One ask at a time; asks made meanwhile share it (so no one job's signal aborts it). */
  private ask(): Promise<FundsProof> {
    const actor = this.actor
    if (actor === undefined) return Promise.reject(new Error('not started'))
    if (this.inFlight !== undefined) return this.inFlight
    const asked =
      this.c.askFunds?.(actor) ??
      new ContractDbClient(
        { actor, clock: this.c.clock },
        { contractDb: this.init.contractDb, timeoutMs: this.init.requestTimeoutMs },
      ).funds(this.c.system.peerId)
    this.inFlight = asked
      .then((proof) => {
        this.proof = proof
        this.c.log.debug({ available: proof.available, expiresAt: proof.expiresAt }, 'funds proof renewed')
        return proof
      })
      .finally(() => (this.inFlight = undefined))
    return this.inFlight
  }
}
