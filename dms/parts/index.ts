/**
 * A node's parts, in start order (stopped in reverse). A new part is one factory in this list
 * (specs/layout.md, "Where a new piece goes"): it takes what the parts before it provide.
 */
import type { NodePartFactory } from './components.js'
import { apiPart, metricsListenerPart } from './api.js'
import { approvalsPart, blobsPart, metricsPart, peerBasePart, relayApprovalPart } from './base.js'
import { ledgerPart, providerMetricsPart, providerPart } from './provider.js'
import {
  functionsPart,
  orchestratorPart,
  queuesPart,
  requesterMetricsPart,
  workflowsPart,
} from './requester.js'

export const NODE_PARTS: readonly NodePartFactory[] = [
  peerBasePart,
  metricsPart,
  blobsPart,
  approvalsPart,
  relayApprovalPart,
  // The provider's (none without a provider role):
  ledgerPart,
  providerPart,
  providerMetricsPart,
  // The requester's (none without a requester role):
  orchestratorPart,
  requesterMetricsPart,
  queuesPart,
  workflowsPart,
  functionsPart,
  apiPart,
  metricsListenerPart,
]
