/**
 * The provider's parts, built only by a node that plays it (its code loaded then: an idle node's
 * memory, specs/benchmarks.md "Idle memory"): the resource ledger, the provider with its engine
 * and machine measurement, its metrics.
 */
import { join } from 'node:path'
import type { ApprovalClient } from '../contract-clients/approval-client.js'
import type { Engine, ENGINE_NAMES, Runner } from '../executor/engine.js'
import { child } from '../log.js'
import { providerMetrics } from '../node-metrics.js'
import { applyConfigOffer } from '../resources/config-offer.js'
import { contractDbAddrsOf } from './base.js'
import { need, partOf, type Components, type NodePartFactory } from './components.js'

/** The resource ledger; locks whose contract never came (the node died meanwhile) are released. */
export const ledgerPart: NodePartFactory = async (c) => {
  const p = c.config.provider
  if (p === undefined) return undefined
  const { db, clock, log } = need(c, 'db')
  const { ResourceLedger } = await import('../resources/ledger.js')
  const ledger = new ResourceLedger({ db, clock, log: child(log, 'dms:resources') })
  return partOf(
    'ledger',
    {
      start: async () => {
        await ledger.start()
        for (const e of ledger.overdueLocks()) await ledger.release(e.id)
        await applyConfigOffer(ledger, p.offer, { clock, log })
      },
      stop: () => ledger.stop(),
    },
    { ledger },
  )
}

/**
 * The engines a provider offers (`provider.engines`, in order; specs/executor.md "Engines") and
 * the runner its allocations go through: the one engine given (benchmarks, tests), else each
 * configured engine built here, behind the router (which picks by capabilities, not by name).
 */
async function enginesOf(
  c: Components & { peerId: string; archiveDir: string },
): Promise<{ engines: Engine[]; runner: Runner }> {
  if (c.executor !== undefined) return { engines: [c.executor], runner: c.executor }
  const names = c.config.provider?.engines ?? ['docker']
  const engines = await Promise.all(names.map((name) => ENGINE_BUILDERS[name](c)))
  if (engines.length === 1) return { engines, runner: engines[0] }
  const { EngineRouter } = await import('../executor/router.js')
  return { engines, runner: new EngineRouter({ engines, log: child(c.log, 'dms:executor') }) }
}

type EngineContext = Components & { peerId: string; archiveDir: string }

// Outputs travel as a blob (an archive fetched in chunks); logs travel in the result and live in
// /dms/job/log messages, so they stay small enough for one frame.
const MAX_LOG_BYTES = 256 * 1024
const maxOutputBytesOf = (c: EngineContext): number => c.config.provider?.maxOutputBytes ?? 256 * 1024 * 1024

/** How each engine named in `provider.engines` is built (its code loaded only when offered). */
const ENGINE_BUILDERS: Record<(typeof ENGINE_NAMES)[number], (c: EngineContext) => Promise<Engine>> = {
  docker: async (c) => {
    const p = c.config.provider
    const { DockerExecutor } = await import('../executor/docker/docker-executor.js')
    return new DockerExecutor(
      { log: child(c.log, 'dms:executor') },
      {
        socketPath: p?.docker?.socketPath,
        pullImages: p?.docker?.pullImages,
        diskQuota: p?.docker?.diskQuota,
        logDriver: p?.docker?.logDriver,
        ulimits: p?.docker?.ulimits,
        workDir: join(c.config.dataDir, 'work'),
        // Archives are written next to the blob store, so publishing one is a rename.
        archiveDir: c.archiveDir,
        owner: c.peerId,
        maxOutputBytes: maxOutputBytesOf(c),
        maxLogBytes: MAX_LOG_BYTES,
      },
    )
  },
  process: async (c) => {
    const p = c.config.provider
    const { ProcessEngine } = await import('../executor/process/process-engine.js')
    return new ProcessEngine(
      { log: child(c.log, 'dms:executor'), clock: c.clock },
      {
        // Its own folder: its runs are found by their folders, Docker's by their labels.
        workDir: join(c.config.dataDir, 'process-work'),
        archiveDir: c.archiveDir,
        ...(p?.process?.runtimes !== undefined ? { runtimes: p.process.runtimes } : {}),
        ...(p?.process?.binds !== undefined ? { binds: p.process.binds } : {}),
        ...(p?.process?.gpuDevDir !== undefined ? { gpuDevDir: p.process.gpuDevDir } : {}),
        ...(p?.process?.nvidiaSmi !== undefined ? { nvidiaSmi: p.process.nvidiaSmi } : {}),
        maxOutputBytes: maxOutputBytesOf(c),
        maxLogBytes: MAX_LOG_BYTES,
      },
    )
  },
}

/** The provider, over its engine and machine measurement; `dms onboard` over its ledger. */
export const providerPart: NodePartFactory = async (c) => {
  const p = c.config.provider
  if (p === undefined) return undefined
  const { system, transport, key, ledger, db, clock, log, blobs } = need(
    c,
    'system',
    'transport',
    'key',
    'ledger',
    'db',
    'blobs',
  )
  const [{ MachineMeter }, { Onboarding }, { ProviderService }] = await Promise.all([
    import('../resources/measure.js'),
    import('../resources/onboarding.js'),
    import('../provider/provider.js'),
  ])
  const { engines, runner: executor } = await enginesOf({
    ...c,
    peerId: transport.peerId,
    archiveDir: blobs.store.tmpDir,
  })
  const meter = new MachineMeter(
    { engines, clock },
    {
      dataDir: c.config.dataDir,
      // The GPUs the engine pins and meters are the ones its nvidia-smi lists.
      ...(p.process?.nvidiaSmi !== undefined ? { nvidiaSmi: p.process.nvidiaSmi } : {}),
    },
  )
  const onboarding = new Onboarding({ ledger, meter, clock })
  const provider = new ProviderService(
    {
      system,
      transport,
      key,
      ledger,
      machine: meter,
      executor,
      db,
      clock,
      log: child(log, 'dms:provider'),
      blobs,
      workDir: join(c.config.dataDir, 'work'),
      approval: c.approvals.get(p.contractDb) as ApprovalClient,
    },
    {
      contractDb: p.contractDb,
      contractDbAddrs: contractDbAddrsOf(c.config),
      bidTtlMs: p.bidTtlMs,
      heartbeatMs: p.heartbeatMs,
      provisionTimeoutMs: p.provisionTimeoutMs,
      requesterCap: p.requesterCap,
      bidRequestRate: p.bidRequestRate,
      images: { registries: p.docker?.registries },
      defaultDiskBytes: p.defaultDiskBytes,
      maxUnpaidJobs: p.maxUnpaidJobs,
      price: p.price,
      laterBids: p.laterBids,
      maxStartAheadSeconds: p.maxStartAheadSeconds,
      claimSweepMs: p.claimSweepMs,
      outputsKeepMs: p.outputsKeepMs,
      outputsBytesPerRequester: p.outputsBytesPerRequester,
      preferences: {
        allowedImages: p.allowedImages,
        allowNetwork: p.allowNetwork,
        maxDurationSeconds: p.maxDurationSeconds,
        minPrice: p.minPrice,
        allowRequesters: p.allowRequesters,
        denyRequesters: p.denyRequesters,
        maxConcurrentJobs: p.maxConcurrentJobs,
      },
    },
  )
  return partOf(
    'provider',
    {
      // The machine and its engines (with the engine's self-check, specs/executor.md "Docker-API
      // engines") are measured before the first bid request can come, not by it: a check that
      // took the first request's time made that provider miss its bid window.
      start: async () => {
        await meter.get()
        await provider.start()
      },
      stop: () => provider.stop(),
    },
    { meter, onboarding, provider },
  )
}

/** The provider's metrics: its allocations (events, after one read of the store) and declines. */
export const providerMetricsPart: NodePartFactory = (c) => {
  if (c.provider === undefined) return undefined
  const { metrics, provider, ledger } = need(c, 'metrics', 'provider', 'ledger')
  const feed = providerMetrics(metrics, provider, ledger)
  return partOf('provider metrics', { start: () => feed.scan(), stop: () => feed.stop() })
}
