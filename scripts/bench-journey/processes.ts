/**
 * Section 2, second half: throughput with every node in its own process (the contract-db in this
 * process, 9 noop providers in scripts/bench-node.ts, the requester a `dms run` with jobs posted
 * over its REST socket).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { privateKeyFromRaw } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { loadOrCreateKey } from '../../dms/keys.js'
import { CONCURRENCY, JOB_BODY, MiB, ROOT, TP_JOBS } from './common.js'
import type { Throughput } from './throughput.js'

interface Proc {
  child: ChildProcess
  peerId: string
  addrs: string[]
  socket: string | null
  exited: Promise<unknown>
}

/**
 * Creates the node key of `dataDir` (passphrase 'bench') and returns its peer id, so the
 * contract-db approves the node before it starts: it then has its approval credential when ready.
 */
async function peerIdOf(dataDir: string): Promise<string> {
  const { key } = await loadOrCreateKey(dataDir, () => Promise.resolve('bench'))
  return peerIdFromPrivateKey(privateKeyFromRaw(key.libp2pRaw())).toString()
}

/** Starts a node process and resolves with its ready line. */
function startProc(args: string[]): Promise<Proc> {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'ignore'],
    env: { ...process.env, DMS_PASSPHRASE: 'bench', DMS_LOG_LEVEL: 'warn' },
  })
  const exited = new Promise((r) => child.once('exit', r))
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited (${code}) before ready`)))
    createInterface({ input: child.stdout }).on('line', (l) => {
      try {
        const r = JSON.parse(l) as { event?: string; peerId: string; addrs: string[]; socket: string | null }
        if (r.event === 'ready')
          resolve({ child, peerId: r.peerId, addrs: r.addrs, socket: r.socket, exited })
      } catch {
        /* not the ready line */
      }
    })
  })
}

/**
 * Throughput with every node in its own process, so the nodes share both cores as separate
 * machines would share nothing: the contract-db in this process, 9 noop providers
 * (scripts/bench-node.ts) and the requester (`dms run`, jobs posted over its REST socket).
 */
export async function throughputProcesses(): Promise<Throughput> {
  const dir = await mkdtemp(join(tmpdir(), 'dms-bench-procs-'))
  const procs: Proc[] = []
  const { ContractDbNode } = await import('../../dms/contract-db/node.js')
  const { ApiClient } = await import('../../dms/api/client.js')
  const cdb = new ContractDbNode(
    { dataDir: join(dir, 'cdb'), oneHost: true, socket: false },
    { passphrase: () => Promise.resolve('bench') },
  )
  await cdb.start()
  try {
    // Disk for 64 jobs at the default quota (256 MiB) each: the noop executor writes nothing.
    const offer = { cpu: 64, memoryBytes: 64 * 1024 * MiB, diskBytes: 16 * 1024 * MiB, gpus: 0 }
    const prices = { perGiBMemoryHour: 10, perGiBDiskHour: 0, perGpuHour: 0, minJobPrice: 1 }
    const providers = await Promise.all(
      Array.from({ length: 9 }, async (_, i) => {
        const cfg = join(dir, `p${i}.json`)
        await cdb.service.approve(await peerIdOf(join(dir, `p${i}`)))
        await writeFile(
          cfg,
          JSON.stringify({
            dataDir: join(dir, `p${i}`),
            oneHost: true,
            api: false,
            bootstrap: cdb.addrs(),
            provider: {
              contractDb: cdb.peerId,
              offer: { ...offer, prices: { ...prices, perCpuHour: 1000 + i } },
            },
          }),
        )
        const p = await startProc([
          '--import',
          'tsx',
          '--import',
          './actors/polyfill.ts',
          'scripts/bench-node.ts',
          cfg,
        ])
        procs.push(p)
        return p
      }),
    )
    const reqCfg = join(dir, 'req.json')
    await writeFile(
      reqCfg,
      JSON.stringify({
        dataDir: join(dir, 'req'),
        oneHost: true,
        bootstrap: [...cdb.addrs(), ...providers.flatMap((p) => p.addrs)],
        requester: { contractDb: { peer: cdb.peerId, addrs: cdb.addrs() }, bidWindowMs: 3000, enoughBids: 3 },
      }),
    )
    const prof = process.env.BENCH_PROFILE_REQUESTER
      ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_REQUESTER}`]
      : []
    const reqPeer = await peerIdOf(join(dir, 'req'))
    await cdb.service.approve(reqPeer)
    await cdb.service.credit(reqPeer, 1_000_000_000_000)
    const req = await startProc([...prof, 'bin/dms.js', 'run', '--config', reqCfg])
    procs.push(req)
    const api = new ApiClient(req.socket!)
    while ((await api.ok<{ bidTopicPeers: number }>('GET', '/v1/info')).bidTopicPeers < providers.length)
      await new Promise((r) => setTimeout(r, 100)) // start-up only: gossip mesh forming
    /** Posts a job and waits for its end on the logs stream (it ends with the final state). */
    const runOne = async (): Promise<string> => {
      const { id } = await api.ok<{ id: string }>('POST', '/v1/jobs', JOB_BODY)
      let text = ''
      await api.raw('GET', `/v1/jobs/${id}/logs?follow=true`, { onData: (c) => void (text += c.toString()) })
      const last = JSON.parse(text.trim().split('\n').at(-1) ?? '{}') as { state?: string }
      return last.state ?? 'unknown'
    }
    await runOne()
    let next = 0
    let failed = 0
    const t0 = performance.now()
    const worker = async () => {
      while (next < TP_JOBS) {
        next++
        if ((await runOne()) !== 'completed') failed++
      }
    }
    await Promise.all(Array.from({ length: CONCURRENCY }, worker))
    const seconds = (performance.now() - t0) / 1000
    return { jobs: TP_JOBS, seconds, perSecond: TP_JOBS / seconds, failed }
  } finally {
    for (const p of procs) p.child.kill('SIGTERM')
    await Promise.all(procs.map((p) => p.exited))
    await cdb.stop()
    await rm(dir, { recursive: true, force: true })
  }
}
