/**
 * What an engine can run (specs/executor.md, "Engines"), in the workload's terms (artifact kinds,
 * network policies), as plain values: the provider compares them with a job and the machine
 * measurement shows them. Imports nothing: the measurement (dms/resources/) and the engines
 * (dms/executor/) both name them, and neither reaches the other.
 */

/**
 * An engine's name, as bids, declines and `MachineInfo.engines` say it: 1-32 of `a-z 0-9 -`
 * (e.g. `docker`; a requester ignores a bid naming another form: `ENGINE_NAME` in
 * dms/contracts/model.ts).
 */
export type EngineName = string

/**
 * What an engine runs: an OCI image, a content-addressed bundle of files, or a program the
 * provider offers (`runtime`, by path) (the last two: a process engine).
 */
export type ArtifactKind = 'image' | 'bundle' | 'runtime'

/** A workload's network: `none` (a loopback only) or `open` (the engine's outbound network). */
export type NetworkPolicy = 'none' | 'open'

/** One artifact a workload names, for the presence check. */
export interface ArtifactRef {
  kind: ArtifactKind
  /** An image reference (`dms-test:1`), a bundle's hash or a runtime's path. */
  ref: string
}

/**
 * What an engine can run, measured when asked. The provider compares it with a job
 * (dms/provider/engine-choice.ts) and shows it in `MachineInfo.engines`.
 */
export interface EngineCapabilities {
  name: EngineName
  /** The engine's own version, when it answers. */
  version?: string
  /** Whether it answers now; an engine that does not is never chosen. */
  available: boolean
  /**
   * Why it is unavailable, for this machine's operator only (it may name local paths and
   * commands): never sent to a peer.
   */
  why?: string
  /** The artifact kinds it runs. */
  artifactKinds: ArtifactKind[]
  /** The runtimes it offers (`runtime` artifacts), by path: a process engine's allow-list. */
  runtimes?: string[]
  /** Whether it can pass GPUs through to a workload. */
  gpus: boolean
  /** The network policies it enforces. */
  networkPolicies: NetworkPolicy[]
  /** Whether a workload's disk is bounded by the kernel while it runs (not only checked after). */
  diskQuota: boolean
  /** Whether a missing artifact is fetched (pulled) rather than refused. */
  fetchesArtifacts: boolean
}

/** What a workload needs of an engine (specs/executor.md, "Engines", "Choice"). */
export interface EngineNeed {
  artifactKind: ArtifactKind
  /** GPUs the workload asks for, all members together. */
  gpus: number
  /** Whether a member asks for a network. */
  network: boolean
}

/** The members' fields an engine need is read from (a workload's, or its needs in a bid request). */
interface NeedingMember {
  artifact: { kind: ArtifactKind }
  network: string
  resources: { gpus?: { count: number } }
}

/**
 * What `w` needs of an engine: the first artifact kind that is not an image (else an image), its
 * GPUs and whether a member asks for the network. The provider chooses the engine it bids on with
 * it and its engine router the engine that runs the job: the same answer both times.
 */
export function engineNeedOf(w: { members: readonly NeedingMember[] }): EngineNeed {
  return {
    artifactKind: w.members.find((m) => m.artifact.kind !== 'image')?.artifact.kind ?? 'image',
    gpus: w.members.reduce((n, m) => n + (m.resources.gpus?.count ?? 0), 0),
    network: w.members.some((m) => m.network === 'outbound'),
  }
}

/** Whether `e` could run a workload with `need`, were it available. */
export function engineFits(e: EngineCapabilities, need: EngineNeed): boolean {
  return (
    e.artifactKinds.includes(need.artifactKind) &&
    (need.gpus === 0 || e.gpus) &&
    e.networkPolicies.includes(need.network ? 'open' : 'none')
  )
}
