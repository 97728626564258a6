/**
 * Publishing a run, the bid machine's `publish` actor: the outputs' archive (a tar the executor
 * wrote and hashed) moved into the blob store and granted to the requester's node, and the signed
 * receipt with the result message. A restored machine publishes again: an archive already taken
 * is not taken twice. Spec: specs/data-plane.md, specs/protocol.md ("Settlement").
 */
import { rm } from 'node:fs/promises'
import type { Logger } from 'pino'
import { fromPromise } from 'xstate'
import type { Clock } from '../../actors/clock.js'
import type { KeyPair } from '../../actors/identity.js'
import type { BlobService } from '../blobs/service.js'
import type { KeptArchives } from './kept-archives.js'
import { signDoc } from '../contracts/canonical.js'
import { DOMAIN, type Receipt } from '../contracts/model.js'
import type { ExecutionResult, MemberResult } from '../executor/executor.js'
import { LIMITS } from '../protocol/bounds.js'
import type { JobResult, MemberOutcome, OutputArchive, OutputEntry } from '../protocol/messages.js'
import { hashOutputs } from '../workload/outputs.js'
import type { PublishInput, PublishOutput } from './bid-machine.js'

export interface PublishDeps {
  blobs: BlobService
  /** The archives kept for requesters, each with its release deadline (kept-archives.ts). */
  archives?: Pick<KeptArchives, 'published'>
  /** Signs the receipt (the node key). */
  key: KeyPair
  clock: Pick<Clock, 'now'>
  log: Logger
}

/** A reason or detail cut to the bound peers enforce on it (`LIMITS.text`). */
export const clip = (text: string | undefined): string | undefined =>
  text === undefined || text.length <= LIMITS.text ? text : text.slice(0, LIMITS.text)

/** The `publish` actor of the bid machine. */
export function publishActor(d: PublishDeps) {
  return fromPromise<PublishOutput, PublishInput>(({ input }) => publish(d, input))
}

async function publish(d: PublishDeps, input: PublishInput): Promise<PublishOutput> {
  const { allocation: a, requester } = input
  const t = a.contract.terms
  let result = input.run
  let published: { outputs: OutputEntry[]; archive?: OutputArchive }
  try {
    published = await outputsOf(d, { peer: requester.peer, jobId: t.jobId, contractId: t.contractId }, result)
  } catch (err) {
    d.log.warn({ err, allocationId: a.allocationId }, 'outputs could not be archived')
    if (result.archive !== undefined) await rm(result.archive.file, { force: true }).catch(() => {})
    // The run stands (status, exit code, usage, logs): only its outputs are lost.
    const lost = `outputs could not be archived: ${(err as Error).message}`
    const reason = result.status === 'completed' ? lost : `${result.reason ?? result.status}; ${lost}`
    const status = result.status === 'completed' ? 'failed' : result.status
    result = { ...result, status, reason, outputs: [], archive: undefined, outputsHash: hashOutputs([]) }
    published = { outputs: [] }
  }
  const receipt: Receipt = {
    contractId: t.contractId,
    jobId: t.jobId,
    allocationId: a.allocationId,
    status: result.status,
    exitCode: result.exitCode,
    reason: clip(result.reason),
    outputsHash: result.outputsHash,
    ...(result.outputsSkipped !== undefined ? { outputsSkipped: result.outputsSkipped } : {}),
    usage: result.usage,
    finishedAt: d.clock.now(),
  }
  const message: JobResult = {
    jobId: t.jobId,
    receipt: { receipt, signature: signDoc(d.key, DOMAIN.receipt, receipt) },
    stdout: result.stdout,
    stderr: result.stderr,
    truncated: result.truncated,
    outputs: published.outputs,
    ...(published.archive !== undefined ? { archive: published.archive } : {}),
    ...(result.members !== undefined ? { members: memberOutcomes(result.members) } : {}),
  }
  return {
    message,
    result: {
      status: result.status,
      exitCode: result.exitCode,
      ...(result.reason !== undefined ? { reason: result.reason } : {}),
      outputsHash: result.outputsHash,
      usage: result.usage,
    },
  }
}

/**
 * A pod's members as the result reports them. Each member's output is cut to its share of one
 * result's (LIMITS.log per stream, split between the members), so a pod's result is no larger than
 * a container's: the whole output came live, per member (`/dms/job/log`).
 */
export function memberOutcomes(members: readonly MemberResult[]): MemberOutcome[] {
  const share = Math.floor(LIMITS.log / Math.max(1, members.length))
  return members.map((m) => ({
    name: m.name,
    status: m.status,
    exitCode: m.exitCode,
    ...(m.reason !== undefined ? { reason: clip(m.reason) } : {}),
    stdout: m.stdout.slice(0, share),
    stderr: m.stderr.slice(0, share),
    truncated: m.truncated || m.stdout.length > share || m.stderr.length > share,
  }))
}

/** The outputs' manifest, and their archive taken into the blob store and granted to `peer`. */
async function outputsOf(
  d: PublishDeps,
  { peer, jobId, contractId }: { peer: string; jobId: string; contractId: string },
  result: ExecutionResult,
): Promise<{ outputs: OutputEntry[]; archive?: OutputArchive }> {
  const outputs = result.outputs.map(({ path, sha256, size }) => ({ path, sha256, size }))
  const archive = result.archive
  if (archive === undefined) {
    if (outputs.length > 0) throw new Error('the executor listed outputs without their archive')
    return { outputs }
  }
  // Deleted once the requester releases it, or at its release deadline (kept-archives.ts), unless
  // those bytes were here for another reason. Its record goes first, so no grant outlives every
  // deadline. Taken before a restart already: the blob is there.
  await d.archives?.published({
    contractId,
    jobId,
    requester: peer,
    sha256: archive.sha256,
    size: archive.size,
  })
  await d.blobs.publishArchive(peer, archive, jobId)
  return { outputs, archive: { sha256: archive.sha256, size: archive.size } }
}
