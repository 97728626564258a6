/**
 * The provider's shapes: `/v1/allocations`, `/v1/earnings` (specs/provider-books.md), its mode
 * `/v1/node/...` (specs/node-lifecycle.md) and `/v1/resources` (specs/resources.md).
 */
import { Type, type Static } from '@sinclair/typebox'
import { StringEnum, StringMap, strictObject } from '../../schema.js'
import { anyObject, described, flag, int, opt, reply, str } from './common.js'

export const AllocationSummary = reply({
  allocationId: opt(str),
  jobId: opt(str),
  contractId: opt(str),
  requester: opt(Type.String(described('peer id'))),
  state: opt(str),
  history: opt(Type.Array(anyObject)),
  result: opt(anyObject),
  /** From the provider's books: how its contract was paid. */
  payment: opt(
    reply({
      escrow: int,
      settleBy: opt(int),
      status: Type.Union([Type.Literal('outstanding'), Type.Literal('settled'), Type.Literal('claimed')]),
      paid: opt(int),
      refunded: opt(int),
      reason: opt(str),
      claimError: opt(str),
    }),
  ),
  usage: opt(
    reply({
      cpuSeconds: opt(Type.Number()),
      memoryBytes: opt(int),
      logBytes: opt(int),
      wallSeconds: opt(Type.Number()),
    }),
  ),
  costSoFar: opt(Type.Integer(described('micro-tokens: the wall time so far at the contract price'))),
})
export type AllocationSummary = Static<typeof AllocationSummary>

const RequesterBooks = reply({ paid: int, unpaid: int, claimed: int })
export const EarningsReply = reply({
  paid: int,
  claimed: int,
  refunded: int,
  outstanding: int,
  contracts: reply({ settled: int, claimed: int, open: int }),
  requesters: StringMap(RequesterBooks),
})
export type EarningsReply = Static<typeof EarningsReply>
export const AllocationListReply = reply({ allocations: opt(Type.Array(AllocationSummary)) })

/** The provider's lifecycle mode: `GET|POST /v1/node/...`, and `mode` in `/v1/info`. */
export const ModeReply = reply({
  mode: opt(StringEnum(['ready', 'paused', 'draining', 'drained'])),
  since: opt(Type.Integer(described('ms since the epoch'))),
  liveBids: opt(Type.Integer(described('bids not yet ended (reservations, contracts, runs)'))),
})
export type ModeView = Static<typeof ModeReply>

/** `POST /v1/node/drain`. */
export const DrainBody = strictObject({
  stop: opt(Type.Boolean(described('stop the node once drained'))),
})

/** `GET /v1/resources?refresh=true`. */
export const RefreshQuery = strictObject({ refresh: flag })
export type RefreshQuery = Static<typeof RefreshQuery>

/** `GET /v1/resources` and the offer routes: a ResourcesView (specs/resources.md). */
export const ResourcesReply = anyObject
