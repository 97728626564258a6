/**
 * The node's own shapes: `/v1/health`, `/v1/info`, `/v1/peers`, `/v1/topics...`, and the
 * OpenAPI document and metrics (specs/rest-api.md).
 */
import { Type, type Static } from '@sinclair/typebox'
import { Const, StringEnum, StringMap } from '../../schema.js'
import { anyObject, described, int, opt, reply, str } from './common.js'
import { ModeReply } from './provider.js'

export const HealthReply = reply({ ok: opt(Const(true)) })

export const PeerSummary = reply({
  peerId: opt(str),
  addrs: opt(Type.Array(str)),
  direction: opt(StringEnum(['inbound', 'outbound'])),
  roles: opt(
    Type.Array(
      StringEnum(['requester', 'provider', 'contract-db', 'relay']),
      described('the roles the peer announces (absent: not a DMS node, or not identified yet)'),
    ),
  ),
  connection: opt(
    StringEnum(['direct', 'relayed'], described('direct when any connection to it is direct, else relayed')),
  ),
  latencyMs: opt(Type.Number(described("round-trip time of the connection monitor's last ping, ms"))),
  bidTopic: opt(Type.Boolean(described('a live subscriber of the bid request topic (a provider or relay)'))),
  gossipScore: opt(Type.Number(described('its gossipsub score at this node'))),
  graylisted: opt(
    Type.Boolean(described('its score is below the graylist threshold: every gossip RPC from it is dropped')),
  ),
})
export type PeerSummary = Static<typeof PeerSummary>
export const PeerListReply = reply({ peers: opt(Type.Array(PeerSummary)) })

const counts = StringMap(int)

/** One engine a provider offers, as last measured (specs/executor.md, "Engines"). */
export const EngineInfo = reply({
  name: opt(str),
  available: opt(Type.Boolean()),
  version: opt(str),
  why: opt(Type.String(described("why it is unavailable: for this node's operator (never sent to a peer)"))),
  artifactKinds: opt(Type.Array(StringEnum(['image', 'bundle', 'runtime']), described('what it runs'))),
  runtimes: opt(Type.Array(str, described('the runtimes it offers, by path (a process engine)'))),
  gpus: opt(Type.Boolean(described('passes GPUs through'))),
  networkPolicies: opt(Type.Array(StringEnum(['none', 'open']))),
  diskQuota: opt(Type.Boolean()),
  fetchesArtifacts: opt(Type.Boolean()),
})
export const InfoReply = reply({
  peerId: opt(str),
  version: opt(str),
  addrs: opt(Type.Array(str)),
  roles: opt(reply({ requester: opt(Type.Boolean()), provider: opt(Type.Boolean()) })),
  bidTopicPeers: opt(int),
  rejections: opt(counts),
  late: opt(counts),
  approval: opt(
    Type.Array(
      reply({
        contractDb: opt(str),
        approved: opt(Type.Boolean()),
        expiresAt: opt(Type.Integer(described('ms since the epoch'))),
        lastError: opt(reply({ code: opt(str), message: opt(str), at: opt(int) })),
      }),
      described("this node's approval credential from each contract-db it uses"),
    ),
  ),
  payloadsRefused: opt(StringMap(counts, described('payloads refused at decode, by behaviour, then reason'))),
  bidsIgnored: opt(StringMap(int, described('requester: bids not ranked, by reason'))),
  bidRequestsIgnored: opt(
    StringMap(int, described('provider: bid requests dropped without an answer, by reason')),
  ),
  declines: opt(StringMap(int, described('provider: bid requests declined, by reason'))),
  engines: opt(
    Type.Array(EngineInfo, described('provider: the engines it offers (provider.engines), as last measured')),
  ),
  topics: opt(
    reply({
      subscribed: opt(Type.Array(str, described('gossip topics this node is subscribed to'))),
      known: opt(
        Type.Array(
          reply({ topic: opt(str), peers: opt(int) }),
          described('topics its connected peers are subscribed to, with their live subscribers'),
        ),
      ),
    }),
  ),
  capacity: opt(
    reply({
      queued: opt(Type.Integer(described('requester: queued jobs waiting for capacity news now'))),
      woken: opt(Type.Integer(described('requester: queued jobs woken by capacity news'))),
      wokenByJoins: opt(
        Type.Integer(described('requester: queued jobs woken because a provider joined the bid topic')),
      ),
      news: opt(
        StringMap(int, described('requester: capacity news kept (`kept`), rejected and ignored, by reason')),
      ),
      unheeded: opt(
        StringMap(
          int,
          described(
            'requester: news and joins that woke nothing while jobs waited, by reason (`repeated`, `no_credit`, `stranger`)',
          ),
        ),
      ),
      announced: opt(Type.Integer(described('provider: capacity news published'))),
    }),
  ),
  mode: opt(ModeReply),
})
export type InfoReply = Static<typeof InfoReply>

/** `POST /v1/topics/subscribe|unsubscribe`: one DMS topic (specs/queueing.md, "Topics"). */
export const TopicBody = Type.Object(
  {
    topic: Type.String({
      minLength: 1,
      maxLength: 128,
      description: 'a DMS topic name, e.g. /dms/capacity/1',
    }),
  },
  { additionalProperties: false },
)
export type TopicBody = Static<typeof TopicBody>

/** `GET /v1/topics` and the topic routes. */
export const TopicsReply = Type.Object({
  subscribed: Type.Array(Type.String(), { description: 'gossip topics this node is subscribed to' }),
  known: Type.Array(Type.Object({ topic: Type.String(), peers: Type.Integer() }), {
    description: 'topics its connected peers are subscribed to, with their live subscribers',
  }),
  optional: Type.Array(
    Type.Object({ topic: Type.String(), subscribed: Type.Boolean(), what: Type.String() }),
    { description: 'the topics this node may join or leave, and whether it is subscribed now' },
  ),
})
export type TopicsReply = Static<typeof TopicsReply>

export const OpenApiReply = anyObject
export const MetricsReply = Type.String()
