/**
 * The `bidding` step: publish the job's bid request, collect bids and declines in a bid window,
 * publish again (1 s, 2 s... later) while nothing usable came, and hand the round to `selecting`
 * with each bidder's reliability. The requester's approval credential and funds proof come
 * first: without them providers reserve nothing, so the job fails at once, saying why.
 * Spec: specs/protocol.md ("Bid window", "Approval"), specs/contract-db.md ("Funds proofs").
 */
import { delay, timeoutSignal } from '../../../actors/clock.js'
import type { ApprovalCredential, FundsProof } from '../../contracts/model.js'
import { W } from '../../protocol/behaviours.js'
import { BID_REQUEST_TOPIC, handleOf, INBOX } from '../../protocol/handles.js'
import { declinedForNow, type BidRequest } from '../../protocol/messages.js'
import { workloadOfJob } from '../job-workload.js'
import { needsOf } from '../../workload/needs.js'
import { waitForWindow, type BidWindow, type WindowSummary } from '../bid-audience.js'
import { SamplePlan, sampleOrder } from '../bid-sample.js'
import { JobFailure, type Patch, type Step } from '../job-machine.js'
import type { JobRecord } from '../job-record.js'
import type { StepDeps } from './deps.js'

export type CollectBidsDeps = Pick<
  StepDeps,
  | 'clock'
  | 'log'
  | 'actor'
  | 'session'
  | 'transport'
  | 'approval'
  | 'funds'
  | 'audience'
  | 'reliability'
  | 'config'
>

/** The wait before the `attempt`-th publish (0-based; the first one is not waited for). */
export const republishDelayMs = (attempt: number): number => 1000 * 2 ** (attempt - 1)

/**
 * @param opts.quote the round is a quote's (`POST /v1/quotes`): its requests say so, providers
 * reserve nothing for them, and no funds proof is asked for (a price can be asked before paying).
 */
export function collectBidsStep(d: CollectBidsDeps, opts: { quote?: boolean } = {}): Step {
  const { clock, session, config } = d
  return async (job, signal) => {
    session.reset()
    // Providers answer only approved requesters: no credential, no bid request (a clear failure).
    let approval: ApprovalCredential
    try {
      approval = await d.approval.ready(config.requestTimeoutMs, signal)
    } catch (err) {
      signal.throwIfAborted()
      throw new JobFailure('NOT_APPROVED', (err as Error).message)
    }
    const creds: Credentials =
      opts.quote === true ? { approval, quote: true } : { approval, funds: await fundsFor(d, job, signal) }
    const direct = job.spec.providers.direct ?? []
    const done = async (): Promise<Patch> => {
      const reliability: Record<string, number> = {}
      for (const b of session.bids) reliability[b.provider] = await d.reliability(b.provider)
      return {
        bids: [...session.bids],
        declines: [...session.declines],
        reliability,
        providerAddrs: Object.fromEntries(session.providerAddrs),
        providersConnected: d.transport.topicSubscribers(BID_REQUEST_TOPIC).length,
      }
    }
    // Push orchestration: the request goes to the chosen providers over the direct stream, never
    // on gossip; gossip only if the spec asks for it when none of them bid.
    if (direct.length > 0) {
      await round(d, job, creds, signal, direct)
      if (session.bids.length > 0 || job.spec.providers.gossipFallback !== true) return done()
    }
    // A bid request published before any provider is subscribed reaches nobody: wait (bounded).
    const waiting = timeoutSignal(config.bidWindowMs, { clock, signal })
    const seen = await d.transport.waitForTopicPeers(BID_REQUEST_TOPIC, 1, { signal: waiting }).then(
      () => true,
      () => false,
    )
    signal.throwIfAborted()
    if (!seen) return done()
    await round(d, job, creds, signal)
    return done()
  }
}

/** What every bid request of the job carries: the requester's approval and its funds proof. */
type Credentials = { approval: ApprovalCredential } & ({ funds: FundsProof } | { quote: true })

/**
 * A funds proof for the job's requests: a provider reserves nothing for a request without one, or
 * whose proof does not cover the escrow its bid would lock (it declines `funds: funds_short`, and
 * a job no provider bids for fails NO_BIDS with those declines). A job for which the contract-db
 * gives no proof fails `NO_FUNDS_PROOF`. The max price is only a ceiling: a proof short of it is
 * sent all the same, since cheaper bids may fit.
 */
async function fundsFor(d: CollectBidsDeps, job: JobRecord, signal: AbortSignal): Promise<FundsProof> {
  try {
    return await d.funds.proofFor(job.spec.maxPrice, signal)
  } catch (err) {
    signal.throwIfAborted()
    throw new JobFailure('NO_FUNDS_PROOF', (err as Error).message)
  }
}

/**
 * Bid windows until a usable answer: the request sent to each of `direct` over the direct
 * stream, or to a sample of the subscribers widened while too few bid (bid-sample.ts), ending on
 * gossip; then all of it again after a backoff.
 */
async function round(
  d: CollectBidsDeps,
  job: JobRecord,
  creds: Credentials,
  signal: AbortSignal,
  direct?: string[],
): Promise<void> {
  const { clock, session, config } = d
  // Published again while no bid came and some providers stayed silent or said "not now": a
  // request can be lost (e.g. published before gossipsub's stream to a new peer is open), and a
  // provider holding as much as it lets this requester hold frees it as this requester's other
  // bids are locked or released (REQUESTER_CAP_REASON).
  for (let attempt = 0; attempt < config.publishAttempts; attempt++) {
    if (attempt > 0) {
      await delay(republishDelayMs(attempt), { clock, signal })
      session.dropDeclines(declinedForNow)
    }
    const exclude = [...job.spec.providers.deny, ...(job.excluded ?? [])]
    let window: BidWindow
    if (direct !== undefined) {
      window = await ask(
        d,
        job,
        creds,
        signal,
        exclude,
        direct.filter((peer) => !exclude.includes(peer)),
      )
    } else {
      const excluded = new Set(exclude)
      const order = sampleOrder(
        job.id,
        d.transport.topicSubscribers(BID_REQUEST_TOPIC).filter((peer) => !excluded.has(peer)),
        (peer) => d.audience.isSilent(peer),
      )
      const plan = new SamplePlan(order, config.bidSample)
      for (let next = plan.next(); ; next = plan.next()) {
        window = await ask(d, job, creds, signal, exclude, next?.kind === 'direct' ? next.peers : undefined)
        if (
          next?.kind !== 'direct' ||
          // (close is idempotent: the window closed in `ask`; this is its summary)
          !widen(window.close(clock.now()), session.bids.length, config.enoughBids)
        )
          break
      }
    }
    // A "not now" decline (REQUESTER_CAP_REASON) is an answer, but worth asking again.
    const forNow = session.declines.some(declinedForNow)
    if (session.bids.length > 0 || (!window.waitingForSome && !forNow)) break
  }
}

/**
 * Whether a sample's closed window calls for the next batch: fewer than `enoughBids` bids, unless
 * it closed on stragglers with a bid in hand (a broadcast's window goes on with what came by then
 * too; widening then would only load providers that are slow to answer with more requests).
 */
export function widen(closed: WindowSummary, bids: number, enoughBids: number): boolean {
  if (bids >= enoughBids) return false
  return !(closed.reason === 'stragglers' && bids > 0)
}

/**
 * One bid window: the request sent directly to `to`, or published on gossip when `to` is
 * undefined (its audience is then every live subscriber); resolves once the window closed.
 */
async function ask(
  d: CollectBidsDeps,
  job: JobRecord,
  creds: Credentials,
  signal: AbortSignal,
  exclude: string[],
  to: string[] | undefined,
): Promise<BidWindow> {
  const { clock, session, config } = d
  const openedAt = clock.now()
  const deadline = openedAt + config.bidWindowMs
  // Who the window may close early for: the peers asked, minus known-silent peers.
  const window = d.audience.open({
    jobId: job.id,
    subscribers: to ?? d.transport.topicSubscribers(BID_REQUEST_TOPIC),
    exclude,
    openedAt,
    deadline,
    enoughBids: config.enoughBids,
  })
  const req: BidRequest = {
    jobId: job.id,
    // What each provider judges before bidding; command, env and workdir stay with the winner.
    workloadNeeds: needsOf(
      workloadOfJob(job.spec),
      job.spec.members !== undefined ? job.spec.resources.diskBytes : 0,
    ),
    maxDurationSeconds: job.spec.maxDurationSeconds,
    maxPrice: job.spec.maxPrice,
    deadline,
    exclude,
    // Renewed while this job waited, if need be.
    approval: d.approval.current() ?? creds.approval,
    ...('funds' in creds ? { funds: d.funds.current() ?? creds.funds } : { quote: true }),
  }
  if (to === undefined) await d.actor.publish(BID_REQUEST_TOPIC, W.bidRequest, req, config.bidWindowMs + 5000)
  else
    await Promise.allSettled(
      to.map((peer) => d.actor.send(handleOf(peer, INBOX.provider), W.directBidRequest, req)),
    )
  await waitForWindow(window, session, clock, signal)
  const summary = window.close(clock.now())
  d.log.debug({ ...summary, direct: to?.length }, 'bid window closed')
  return window
}
