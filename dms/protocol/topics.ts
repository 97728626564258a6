/**
 * Topic management: the DMS gossip topics, which of them a node may opt in or out of, and what is
 * checked before `POST /v1/topics/subscribe|unsubscribe` does anything. A topic a role
 * needs is not optional (a provider hears bid requests on BID_REQUEST_TOPIC; `dms pause` is how it
 * stops taking jobs); a requester may leave CAPACITY_TOPIC (its queued jobs then bid again on
 * their backoff and when a provider joins). Names are checked against this table before anything
 * is done; the REST port over it is in node-adapters.ts. Spec: specs/queueing.md ("Topics").
 */
import { DmsError } from '../../actors/errors.js'
import { BID_REQUEST_TOPIC, CAPACITY_TOPIC } from './handles.js'

/** Every DMS gossip topic, with what travels on it. */
export const DMS_TOPICS: Readonly<Record<string, string>> = {
  [BID_REQUEST_TOPIC]: "requesters' bid requests (a provider needs it)",
  [CAPACITY_TOPIC]: "providers' capacity news (optional for a requester: wakes its queued jobs)",
}

/** A topic name that is not a DMS topic. */
export class UnknownTopicError extends DmsError {
  readonly statusCode = 400
  readonly field = 'body/topic'
  constructor(topic: string) {
    super(
      'UNKNOWN_TOPIC',
      `body/topic: ${JSON.stringify(topic)} is not a DMS topic (one of ${Object.keys(DMS_TOPICS).join(', ')})`,
    )
  }
}

/** A topic this node's roles need: it cannot be left or joined by hand. */
export class TopicNotOptionalError extends DmsError {
  readonly statusCode = 409
  readonly field = 'body/topic'
  constructor(topic: string) {
    super(
      'TOPIC_NOT_OPTIONAL',
      `${topic} is not optional: a provider subscribes to it while it runs (use \`dms pause\` to stop taking jobs), other nodes never do`,
    )
  }
}

/**
 * Checks `topic` for a subscribe or unsubscribe by hand: a DMS topic, and an optional one.
 * @throws UnknownTopicError, TopicNotOptionalError
 */
export function checkOptionalTopic(topic: string): void {
  if (!Object.hasOwn(DMS_TOPICS, topic)) throw new UnknownTopicError(topic)
  if (topic !== CAPACITY_TOPIC) throw new TopicNotOptionalError(topic)
}
