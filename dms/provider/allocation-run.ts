/**
 * The run of one allocation, the bid machine's `execute` actor: stages the inputs, runs the
 * container in the engine (or, restored after a restart, re-attaches to it by its labels) and
 * reports each step to the machine (`STAGED`, `STARTED`, `AFRESH`, `RAN`). A `CANCEL` aborts the
 * run (the executor stops the container and reports `cancelled`); leaving the state aborts it too.
 * Spec: specs/state-machines.md ("Provider bid and allocation"), specs/executor.md.
 */
import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import type { Logger } from 'pino'
import { fromCallback } from 'xstate'
import type { Clock } from '../../actors/clock.js'
import { retry } from '../../actors/retry.js'
import type { Actor } from '../../actors/system.js'
import type { BlobService } from '../blobs/service.js'
import { fetchSourcedInputs } from '../blobs/sourced.js'
import { stageInputs } from '../blobs/staging.js'
import { blobsHandle, fetchBlobs, LogForwarder } from '../blobs/transfer.js'
import { peerMessage } from '../executor/errors.js'
import type { SignedContract } from '../contracts/model.js'
import { termsMaxDuration, termsResources } from '../contracts/terms.js'
import type { Runner } from '../executor/engine.js'
import type { ExecutionResult, ExecutionSpec, RunOptions } from '../executor/executor.js'
import { notStarted } from '../executor/outputs.js'
import { W } from '../protocol/behaviours.js'
import type { Workload } from '../workload/workload.js'
import type { Allocation, BidEvent } from './bid-context.js'
import type { LiveUsageBoard } from './live-usage.js'
import type { ExecuteCommand, ExecuteInput } from './bid-machine.js'

export interface AllocationRunDeps {
  executor: Runner
  blobs: BlobService
  clock: Clock
  log: Logger
  /** Holds `inputs/<allocationId>/`, the staged inputs of running allocations. */
  workDir: string
  /** The allocation's own actor (`alloc/<id>`): fetches its inputs, forwards its logs. */
  actorFor(allocationId: string): Actor
  /** Where the run's usage so far is kept for heartbeats and the allocations view. */
  usage?: LiveUsageBoard
  /**
   * Tells the contract-db the contract's run starts (its signed start note) and resolves once it
   * is recorded; rejects (START_DEADLINE_PASSED past the terms' startBy) when the run must not
   * start. Without it (tests of the machine alone) no note is sent.
   */
  startNote?(contract: SignedContract, signal: AbortSignal): Promise<void>
  /**
   * Whether containers may use the network (`provider.allowNetwork`), checked again at the run: an
   * allocation invoked while it was allowed and restored with it off runs without. @default false
   */
  allowNetwork?: boolean
}

/** Where an allocation's inputs are staged (removed once it has run). */
export const inputsDirOf = (workDir: string, allocationId: string): string =>
  join(workDir, 'inputs', allocationId)

/**
 * What the allocation runs: its workload as invoked, with network only where this provider allows
 * it, checked again here (an allocation restored with `allowNetwork` off runs without).
 */
export function workloadOf(a: Allocation, allowNetwork: boolean): Workload {
  if (allowNetwork) return a.workload
  return { members: a.workload.members.map((m) => ({ ...m, network: 'none' as const })) }
}

/** How often a restored run asks an engine that does not answer again. */
const ENGINE_RETRY_MS = 5000

const LOST = 'the provider restarted and the container was gone: the run is lost'

/** The `execute` actor of the bid machine, over the provider's executor, blobs and actors. */
export function executeActor(d: AllocationRunDeps) {
  return fromCallback<ExecuteCommand, ExecuteInput>(({ input, sendBack, receive }) => {
    const abort = new AbortController()
    let over = false
    const send = (e: BidEvent) => {
      if (!over) sendBack(e)
    }
    receive((e) => {
      if (e.type === 'CANCEL') abort.abort(new Error(e.reason))
    })
    void run(d, input, abort.signal, send).then((result) => send({ type: 'RAN', result }))
    return () => {
      over = true
      abort.abort(new Error('the allocation left its run'))
    }
  })
}

async function run(
  d: AllocationRunDeps,
  input: ExecuteInput,
  signal: AbortSignal,
  send: (e: BidEvent) => void,
): Promise<ExecutionResult> {
  const a = input.allocation
  const t = a.contract.terms
  const log = d.log.child({ allocationId: a.allocationId, jobId: t.jobId })
  const actor = d.actorFor(a.allocationId)
  const spec: ExecutionSpec = {
    jobId: t.jobId,
    allocationId: a.allocationId,
    workload: workloadOf(a, d.allowNetwork === true),
    diskBytes: a.diskBytes || termsResources(t).diskBytes,
    timeoutSeconds: termsMaxDuration(t),
    ...(a.gpuIndices !== undefined ? { gpuIndices: a.gpuIndices } : {}),
  }
  const forwarder = new LogForwarder((l) => actor.send(input.requester, W.log, l), d.clock, {
    jobId: t.jobId,
    allocationId: a.allocationId,
  })
  let started = false
  const options: RunOptions = {
    signal,
    onEvent: (e) => {
      if (e.type === 'log') {
        forwarder.push(e.stream, e.chunk, e.member)
        d.usage?.log(a.allocationId, Buffer.byteLength(e.chunk))
      }
      if (e.type === 'usage') d.usage?.sample(a.allocationId, e)
      if ((e.type === 'started' || (e.type === 'reattached' && e.running)) && !started) {
        started = true
        d.usage?.started(a.allocationId)
        send({ type: 'STARTED', detail: e.type === 'reattached' ? 're-attached after a restart' : undefined })
      }
    },
  }
  const fresh = async () => {
    // The start note's round trip runs while the inputs are staged and the executor prepares the
    // container (work folder, disk quota, create); the container starts only once the
    // contract-db recorded the note (specs/contract-db.md, "Start notes").
    const noted = d.startNote?.(a.contract, signal)
    noted?.catch(() => {}) // awaited by the executor; not unhandled while the inputs are staged
    const dir = await stage(d, input, signal, send)
    return d.executor.run({ ...spec, inputsDir: dir }, { ...options, startAfter: noted })
  }
  try {
    const restored = input.restoredIn
    if (restored !== 'provisioning' && restored !== 'running') return await fresh()
    // Restored after a restart: never a second run of a container that started. The engine may
    // not answer yet: asked again until it does (or the run is cancelled).
    const containers = await retry(() => d.executor.listRuns(), {
      attempts: Number.MAX_SAFE_INTEGER,
      backoffMs: () => ENGINE_RETRY_MS,
      onRetry: (err) => log.warn({ err }, 'container engine unavailable: re-attach waits for it'),
      clock: d.clock,
      signal,
    })
    if (containers.some((c) => c.allocationId === a.allocationId)) {
      return await d.executor.reattach(spec, options).catch(async (err: unknown) => {
        // A container created but never started is removed by reattach: start afresh.
        if ((err as Error).name !== 'AllocationNotFoundError') throw err
        send({ type: 'AFRESH', detail: 'started afresh after a restart' })
        return fresh()
      })
    }
    if (restored === 'provisioning') return await fresh()
    return notStarted('failed', -1, LOST)
  } catch (err) {
    if (signal.aborted) return notStarted('cancelled', -1, `cancelled before start: ${reasonOf(signal)}`)
    log.warn({ err }, 'allocation could not run')
    return notStarted('failed', -1, peerMessage(err))
  } finally {
    forwarder.flush()
    d.usage?.end(a.allocationId)
    await rm(inputsDirOf(d.workDir, a.allocationId), { recursive: true, force: true }).catch(() => {})
  }
}

/**
 * Fetches the inputs' blobs this provider lacks from the requester's node, and the files handed
 * on from another provider's archive from that provider (each checked against its hash), and lays
 * them out read-only for /inputs. Returns the folder (none without inputs).
 */
async function stage(
  d: AllocationRunDeps,
  input: ExecuteInput,
  signal: AbortSignal,
  send: (e: BidEvent) => void,
): Promise<string | undefined> {
  const { allocation: a, requester } = input
  if (a.inputs.length === 0) return undefined
  const from = blobsHandle(requester.peer, requester.addrs)
  const own = a.inputs.filter((f) => f.source === undefined)
  const actor = d.actorFor(a.allocationId)
  const fetched = await fetchBlobs(actor, d.blobs, from, own, { signal })
  // A workflow's hand-offs: straight from the upstream provider, under the requester's grant.
  const archives = await fetchSourcedInputs(actor, d.blobs, a.inputs, { signal })
  signal.throwIfAborted()
  const dir = inputsDirOf(d.workDir, a.allocationId)
  await rm(dir, { recursive: true, force: true })
  await stageInputs(d.blobs.store, a.inputs, dir)
  const bytes = a.inputs.reduce((n, f) => n + f.size, 0)
  const handed = a.inputs.length - own.length
  send({
    type: 'STAGED',
    detail: `inputs staged: ${a.inputs.length} files, ${bytes} bytes (${fetched.length} blobs fetched, ${own.length - fetched.length} cached${handed > 0 ? `, ${handed} handed on from upstream providers, ${archives} archives fetched` : ''})`,
  })
  return dir
}

const reasonOf = (signal: AbortSignal): string =>
  signal.reason instanceof Error ? signal.reason.message : String(signal.reason)
