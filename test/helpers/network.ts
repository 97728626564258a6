import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { NodeConfig } from '../../dms/config.js'
import { ContractDbNode, type ContractDbConfig } from '../../dms/contract-db/node.js'
import { DmsNode, type NodeComponents } from '../../dms/node.js'
import type { Prices } from '../../dms/resources/types.js'
import { BID_REQUEST_TOPIC } from '../../dms/protocol/handles.js'
import type { StoredJob } from '../../dms/orchestrator/orchestrator.js'

const MiB = 1024 * 1024
export const TEST_IMAGE = process.env.DMS_TEST_IMAGE ?? 'dms-test:1'
/** Unseals the test nodes' keys (they are sealed like any node's). */
export const TEST_PASSPHRASE = () => Promise.resolve('test passphrase')

export const prices = (perCpuHour: number): Prices => ({
  perCpuHour,
  perGiBMemoryHour: 10,
  perGiBDiskHour: 0,
  perGpuHour: 0,
  minJobPrice: 1,
})

export interface ProviderSpec {
  cpu: number
  memoryBytes: number
  perCpuHour: number
  /** Disk offered. @default 1 GiB (four jobs at the default disk quota of 256 MiB) */
  diskBytes?: number
  /** The provider's Docker-API engine: its socket, log driver, ulimits (specs/config.md). @default Docker's defaults */
  docker?: NonNullable<NodeConfig['provider']>['docker']
  /** Accept policy and other provider settings (specs/config.md). */
  policy?: Omit<NonNullable<NodeConfig['provider']>, 'contractDb' | 'offer' | 'docker'>
}

export interface TestNetwork {
  /** Temp folder holding every node's data dir; removed by stop(). */
  root: string
  /** The contract-db, embedded in-process (the real process is `dms contract-db run`). */
  contractDb: ContractDbNode
  providers: DmsNode[]
  requester: DmsNode
  /**
   * One more requester, connected to every provider, approved and funded like the first one
   * (e.g. with other `requester` settings, to compare two behaviours on the same providers).
   */
  addRequester(name: string, requester?: Partial<NonNullable<NodeConfig['requester']>>): Promise<DmsNode>
  stop(): Promise<void>
}

/**
 * A real network on 127.0.0.1: a contract-db, providers and a requester, each its own libp2p host,
 * key and level database in a temp dir. Identities are approved and the requester funded.
 */
export async function startNetwork(
  providerSpecs: ProviderSpec[],
  opts: {
    components?: NodeComponents
    requester?: Partial<NonNullable<NodeConfig['requester']>>
    /** The requester's opening balance. @default 1000000 */
    fund?: number
    /** The contract-db's listen addresses (e.g. a fixed port, to restart it). @default tcp/0 */
    contractDbListen?: string[]
    /** More of the contract-db's config (deadlines...). */
    contractDb?: Partial<ContractDbConfig>
    /** More config for every node, providers and requesters (e.g. `metrics`, `api`). */
    nodes?: Partial<Omit<NodeConfig, 'dataDir' | 'provider' | 'requester'>>
  } = {},
): Promise<TestNetwork> {
  const root = await mkdtemp(join(tmpdir(), 'dms-net-'))
  const started: Array<{ stop(): Promise<void> }> = []
  const startNode = async (name: string, cfg: Omit<NodeConfig, 'dataDir'>) => {
    const node = new DmsNode(
      { dataDir: join(root, name), oneHost: true, ...opts.nodes, ...cfg },
      { passphrase: TEST_PASSPHRASE, ...opts.components },
    )
    await node.start()
    started.push(node)
    return node
  }
  try {
    // The contract-db starts with no approvals; they are added once the peer ids exist.
    const contractDb = new ContractDbNode(
      {
        dataDir: join(root, 'contract-db'),
        oneHost: true,
        listen: opts.contractDbListen,
        ...opts.contractDb,
      },
      { clock: opts.components?.clock, passphrase: TEST_PASSPHRASE },
    )
    await contractDb.start()
    started.push(contractDb)
    const cdb = { peer: contractDb.peerId, addrs: contractDb.addrs() }
    const providers: DmsNode[] = []
    for (const [i, p] of providerSpecs.entries()) {
      providers.push(
        await startNode(`provider-${i}`, {
          bootstrap: cdb.addrs,
          provider: {
            contractDb: cdb.peer,
            offer: {
              cpu: p.cpu,
              memoryBytes: p.memoryBytes,
              diskBytes: p.diskBytes ?? 1024 * MiB,
              gpus: 0,
              prices: prices(p.perCpuHour),
            },
            docker: p.docker,
            ...p.policy,
          },
        }),
      )
    }
    const fund = opts.fund ?? 1_000_000
    const addRequester = async (name: string, cfg?: Partial<NonNullable<NodeConfig['requester']>>) => {
      const node = await startNode(name, {
        bootstrap: [...cdb.addrs, ...providers.flatMap((p) => p.addrs())],
        requester: { contractDb: cdb, bidWindowMs: 3000, ...cfg },
      })
      await approve(contractDb, node)
      if (fund > 0) await contractDb.service.credit(node.peerId, fund)
      if (providers.length > 0) await node.transport.waitForTopicPeers(BID_REQUEST_TOPIC, providers.length)
      return node
    }
    for (const n of providers) await approve(contractDb, n)
    const requester = await addRequester('requester', opts.requester)
    return {
      root,
      contractDb,
      providers,
      requester,
      addRequester,
      async stop() {
        for (const n of started.reverse()) await n.stop()
        await rm(root, { recursive: true, force: true })
      },
    }
  } catch (err) {
    for (const n of started.reverse()) await n.stop()
    await rm(root, { recursive: true, force: true })
    throw err
  }
}

/**
 * Approves `node` at the contract-db and has it fetch its approval credential now (rather than at
 * its next retry), as an operator's `dms contract-db approve` followed by the node's renewal.
 */
export async function approve(contractDb: ContractDbNode, node: DmsNode): Promise<void> {
  await contractDb.service.approve(node.peerId)
  const client = node.approvals.get(contractDb.peerId)
  if (client === undefined) throw new Error(`${node.peerId} does not use contract-db ${contractDb.peerId}`)
  await client.refresh()
  if (client.current() === undefined) throw client.notApproved()
}

/**
 * Resolves with the job once its machine is in one of `states`: now, or at a later change
 * (event-driven, no polling). Subscribes before reading the current state, so no change is missed.
 */
export function jobReaches(
  node: DmsNode,
  id: string,
  states: string[] = ['completed', 'failed', 'cancelled'],
): Promise<StoredJob> {
  const orch = node.orchestrator!
  return new Promise((resolve, reject) => {
    let settled = false
    const done = (j: StoredJob) => {
      if (settled) return
      settled = true
      off()
      resolve(j)
    }
    const off = orch.onChange((j) => {
      if (j.record.id === id && states.includes(j.state)) done(j)
    })
    orch.get(id).then((j) => {
      if (j !== undefined && states.includes(j.state)) done(j)
    }, reject)
  })
}
