/**
 * The workload's hash: what the contract terms sign of what runs (`ContractTerms.workloadHash`),
 * so that a provider can prove what it was asked to run and a requester what it agreed to
 * (specs/protocol.md, "Contract terms"; specs/executor.md, "What runs").
 */
import { createHash } from 'node:crypto'
import { canonicalJson } from '../../actors/canonical-json.js'
import type { Workload } from './workload.js'

/** A workload hash's form: a sha256 in lowercase hex. */
export const WORKLOAD_HASH_PATTERN = /^[0-9a-f]{64}$/

/**
 * The sha256 (hex) of the workload's canonical JSON: the same for the same workload whatever order
 * its keys were built in, and survives the JSON round trip the invocation takes. Every field counts:
 * each member's name, artifact, command, env, workdir, network and resources, and their order.
 */
export function workloadHash(w: Workload): string {
  return createHash('sha256').update(canonicalJson(w)).digest('hex')
}

/** Whether `v` has a workload hash's form (it says nothing of which workload). */
export const isWorkloadHash = (v: unknown): v is string =>
  typeof v === 'string' && WORKLOAD_HASH_PATTERN.test(v)
