/**
 * The ports of a role this node does not play: every call answers 409 with a stable code and a
 * message naming the config section that is missing. The routes do not check roles; they call
 * the port they were given (specs/rest-api.md, "Errors").
 */
import { DmsError } from '../../actors/errors.js'
import type {
  AllocationsPort,
  ApiPorts,
  BlobsPort,
  FunctionsPort,
  JobsPort,
  NodeModePort,
  QueuesPort,
  ResourcesPort,
  WorkflowsPort,
} from './ports.js'

/** A route of the requester role on a node without a `requester` config section. */
export class NotARequesterError extends DmsError {
  readonly statusCode = 409
  constructor() {
    super('NOT_A_REQUESTER', 'this node is not a requester (no "requester" section in its config)')
  }
}

/** A route of the provider role on a node without a `provider` config section. */
export class NotAProviderError extends DmsError {
  readonly statusCode = 409
  constructor() {
    super('NOT_A_PROVIDER', 'this node is not a provider (no "provider" section in its config)')
  }
}

const throws = (error: () => Error) => (): never => {
  throw error()
}
const rejects = (error: () => Error) => (): Promise<never> => Promise.reject(error())
const notARequester = rejects(() => new NotARequesterError())
const notAProvider = rejects(() => new NotAProviderError())

/** The jobs of a node that is not a requester. */
export const noJobs: JobsPort = {
  post: notARequester,
  quote: notARequester,
  list: notARequester,
  get: notARequester,
  rerun: notARequester,
  prune: notARequester,
  cancel: notARequester,
  liveLogs: throws(() => new NotARequesterError()),
  onLog: throws(() => new NotARequesterError()),
  onChange: throws(() => new NotARequesterError()),
}

/** The queues of a node that is not a requester. */
export const noQueues: QueuesPort = {
  create: notARequester,
  list: notARequester,
  get: notARequester,
  drain: notARequester,
  cancel: notARequester,
}

/** The lifecycle mode of a node that is not a provider. */
export const noMode: NodeModePort = {
  view: notAProvider,
  pause: notAProvider,
  resume: notAProvider,
  drain: notAProvider,
}

/** The workflows of a node that is not a requester. */
export const noWorkflows: WorkflowsPort = {
  post: notARequester,
  list: notARequester,
  get: notARequester,
  cancel: notARequester,
  outputs: notARequester,
}

/** The workers and actions of a node that is not a requester. */
export const noFunctions: FunctionsPort = {
  registerWorker: notARequester,
  workers: notARequester,
  functions: notARequester,
  postActions: notARequester,
  action: notARequester,
}

/** The allocations of a node that is not a provider. */
export const noAllocations: AllocationsPort = {
  list: notAProvider,
  earnings: notAProvider,
}

/** The resources of a node that is not a provider. */
export const noResources: ResourcesPort = {
  view: notAProvider,
  onboard: notAProvider,
  offboard: notAProvider,
}

/** Blobs of a node that has no store (OpenAPI generation): 503 on use. */
const noBlobs: BlobsPort = {
  maxBlobBytes: 1, // a route's body limit must be positive
  put: rejects(() =>
    Object.assign(new DmsError('NO_BLOB_STORE', 'this API has no blob store'), { statusCode: 503 }),
  ),
  read: () => Promise.resolve(undefined),
  outputFile: () => Promise.resolve(undefined),
}

/**
 * Ports with no node behind them: no role, no peers, no blobs, empty metrics. For building the
 * API without a node (scripts/gen-openapi.ts) and as a base for tests' fakes.
 */
export function detachedPorts(): ApiPorts {
  return {
    info: { info: () => ({}) },
    peers: { list: () => Promise.resolve([]) },
    topics: {
      view: () => Promise.resolve({ subscribed: [], known: [], optional: [] }),
      subscribe: notARequester,
      unsubscribe: notARequester,
    },
    jobs: noJobs,
    queues: noQueues,
    mode: noMode,
    workflows: noWorkflows,
    functions: noFunctions,
    allocations: noAllocations,
    resources: noResources,
    blobs: noBlobs,
    metrics: { contentType: 'text/plain; version=0.0.4; charset=utf-8', render: () => Promise.resolve('') },
  }
}
