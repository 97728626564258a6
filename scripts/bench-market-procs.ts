/**
 * The multi-process network of scripts/bench-market.ts (`--procs N`): the providers in N host
 * processes (scripts/bench-market-host.ts), the contract-db and both requesters in this one.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ContractDbNode } from '../dms/contract-db/node.js'
import { DmsNode } from '../dms/node.js'
import { approve, TEST_PASSPHRASE } from '../test/helpers/network.js'
import { ENOUGH_BIDS, measure, type Counters, type Modes, type Row } from './bench-market-measure.js'
import { Host } from './bench-market-probes.js'

/** The providers in `procs` host processes; the contract-db and both requesters in this one. */
export async function realProcs(providers: number, procs: number, jobs: number): Promise<Row[]> {
  const root = await mkdtemp(join(tmpdir(), 'dms-market-'))
  const started: Array<{ stop(): Promise<void> }> = []
  const hosts: Host[] = []
  try {
    const contractDb = new ContractDbNode(
      { dataDir: join(root, 'contract-db'), oneHost: true },
      { passphrase: TEST_PASSPHRASE },
    )
    await contractDb.start()
    started.push(contractDb)
    const cdbAddrs = contractDb.addrs()
    const per = Math.ceil(providers / procs)
    for (let first = 0; first < providers; first += per)
      hosts.push(
        new Host([
          'scripts/bench-market-host.ts',
          root,
          contractDb.peerId,
          JSON.stringify(cdbAddrs),
          String(Math.min(per, providers - first)),
          String(first),
        ]),
      )
    const ready = await Promise.all(
      hosts.map((h) => h.next<{ ready: Array<{ peer: string; addrs: string[] }> }>()),
    )
    const peers = ready.flatMap((r) => r.ready)
    for (const p of peers) await contractDb.service.approve(p.peer)
    const approved = await Promise.all(hosts.map((h) => h.ask<{ approved: boolean }>('approved')))
    if (!approved.every((a) => a.approved)) throw new Error('a provider got no approval credential')
    const requester = async (name: string, bidSample?: number) => {
      const node = new DmsNode(
        {
          dataDir: join(root, name),
          oneHost: true,
          bootstrap: [...cdbAddrs, ...peers.flatMap((p) => p.addrs)],
          requester: {
            contractDb: { peer: contractDb.peerId, addrs: cdbAddrs },
            bidWindowMs: 3000,
            enoughBids: ENOUGH_BIDS,
            ...(bidSample === undefined ? {} : { bidSample }),
          },
        },
        { passphrase: TEST_PASSPHRASE },
      )
      await node.start()
      started.push(node)
      await approve(contractDb, node)
      await contractDb.service.credit(node.peerId, 1_000_000_000_000)
      return node
    }
    const everyone = await requester('requester-everyone', 0)
    const sampled = await requester('requester')
    const here = [contractDb, everyone, sampled]
    const counters = async (): Promise<Counters> => {
      const u = process.cpuUsage()
      const stats = await Promise.all(hosts.map((h) => h.ask<Omit<Counters, 'sent'>>('stats')))
      return {
        cpuMs: (u.user + u.system) / 1000 + stats.reduce((a, x) => a + x.cpuMs, 0),
        delivered:
          here.reduce((a, n) => a + n.system.metrics().delivered, 0) +
          stats.reduce((a, x) => a + x.delivered, 0),
        bidAnswers: stats.reduce((a, x) => a + x.bidAnswers, 0),
        sent: -1,
      }
    }
    const modes: Modes = [
      ['everyone (bidSample 0)', everyone],
      ['sample (default)', sampled],
    ]
    return await measure(providers, modes, counters, procs + 1, jobs)
  } finally {
    for (const h of hosts) {
      h.child.stdin!.write('stop\n')
      await new Promise((r) => h.child.once('exit', r))
    }
    for (const n of started.reverse()) await n.stop()
    await rm(root, { recursive: true, force: true })
  }
}
