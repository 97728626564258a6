/**
 * A multi-host devnet in network namespaces (root only; scripts/netns.ts builds them):
 *   relay     7.77.0.10  public: the contract-db, also a circuit relay v2 and a DHT server
 *   req       7.77.0.11  public: a requester (DHT client: it finds providers through the DHT)
 *   prov      10.77.1.10 behind a MASQUERADE NAT with no inbound port: a provider that reserves a
 *                        slot on the relay and announces itself on the DHT
 * Every process (the built CLI: run `npm run build` first) runs in its host's namespace (`ip netns exec`); their REST sockets and the Docker
 * socket are files, so this process and the provider reach them from the machine's namespace.
 *
 *   node --import tsx scripts/netns-devnet.ts [--no-hole-punching] [--keep]
 * runs it until Ctrl-C; test/e2e/netns.spec.ts and scripts/bench-netns.ts use `startNetnsDevnet`.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { createWriteStream } from 'node:fs'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { privateKeyFromRaw } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { ApiClient } from '../dms/api/client.js'
import type { NodeConfig } from '../dms/config.js'
import type { ContractDbConfig } from '../dms/contract-db/node.js'
import { loadOrCreateKey } from '../dms/keys.js'
import { buildNetns, inNs, type Netns } from './netns.js'

const ROOT = join(import.meta.dirname, '..')
const PASSPHRASE = 'netns devnet passphrase'
const MiB = 1024 * 1024
const PORT = 4001

export interface NsProc {
  name: string
  ns: string
  child: ChildProcess
  peerId: string
  socket: string
  dataDir: string
  logPath: string
  exited: Promise<unknown>
  /**
   * Resolves with the first JSON log line for which `test` holds: from line `since` (0: the
   * process's first line) or, by default, from now on.
   */
  logLine(test: (line: Record<string, unknown>) => boolean, since?: number): Promise<Record<string, unknown>>
  /** How many JSON log lines it has written so far (a `since` for logLine). */
  lineCount(): number
}

export interface NetnsDevnet {
  root: string
  netns: Netns
  relay: NsProc
  requester: NsProc
  provider: NsProc
  /** The requester's REST API. */
  api: ApiClient
  /** Starts the provider again (same data dir and config; `holePunching` may differ). */
  restartProvider(opts?: { holePunching?: boolean }): Promise<NsProc>
  stop(): Promise<void>
}

async function peerIdOf(dataDir: string): Promise<string> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 })
  const { key } = await loadOrCreateKey(dataDir, () => Promise.resolve(PASSPHRASE))
  return peerIdFromPrivateKey(privateKeyFromRaw(key.libp2pRaw())).toString()
}

/** Starts `dms <command> --config` (from source) in namespace `ns`; resolves at its ready line. */
async function launch(
  root: string,
  name: string,
  ns: string,
  cfg: (NodeConfig | ContractDbConfig) & { dataDir: string },
  command: string[],
): Promise<NsProc> {
  const cfgPath = join(root, `${name}.json`)
  await writeFile(cfgPath, JSON.stringify(cfg, null, 2))
  const logPath = join(root, `${name}.log`)
  // The built CLI (npm run build; `npm test` builds first): starts in a fraction of tsx's time.
  const argv = [process.execPath, join(ROOT, 'bin/dms.js'), ...command, '--config', cfgPath]
  const { cmd, args } = inNs(ns, argv)
  const child = spawn(cmd, args, {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, DMS_PASSPHRASE: PASSPHRASE, DMS_LOG_LEVEL: process.env.DMS_LOG_LEVEL ?? 'info' },
  })
  const log = createWriteStream(logPath, { flags: 'a' })
  const waiters = new Set<{
    test: (l: Record<string, unknown>) => boolean
    resolve: (l: Record<string, unknown>) => void
  }>()
  let tail = ''
  // Kept for logLine's `since` (a test process runs a few minutes; bounded anyway).
  const lines: Array<Record<string, unknown>> = []
  createInterface({ input: child.stderr }).on('line', (text) => {
    log.write(`${text}\n`)
    tail = (tail + text + '\n').slice(-4000)
    let line: Record<string, unknown>
    try {
      line = JSON.parse(text) as Record<string, unknown>
    } catch {
      return
    }
    if (lines.length < 100_000) lines.push(line)
    for (const w of [...waiters])
      if (w.test(line)) {
        waiters.delete(w)
        w.resolve(line)
      }
  })
  const exited = new Promise((r) => child.once('exit', r))
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${name} exited (${code}) before ready:\n${tail}`)))
    createInterface({ input: child.stdout }).on('line', (text) => {
      try {
        const ready = JSON.parse(text) as { event?: string; peerId: string; socket: string }
        if (ready.event !== 'ready') return
        resolve({
          name,
          ns,
          child,
          peerId: ready.peerId,
          socket: ready.socket,
          dataDir: cfg.dataDir,
          logPath,
          exited,
          logLine: (test, since) => {
            const past = since === undefined ? undefined : lines.slice(since).find(test)
            if (past !== undefined) return Promise.resolve(past)
            return new Promise((r) => waiters.add({ test, resolve: r }))
          },
          lineCount: () => lines.length,
        })
      } catch {
        /* not the ready line */
      }
    })
  })
}

async function stopProc(p: NsProc | undefined): Promise<void> {
  if (p === undefined || p.child.exitCode !== null || p.child.signalCode !== null) return
  p.child.kill('SIGTERM')
  const t = setTimeout(() => p.child.kill('SIGKILL'), 10_000)
  await p.exited
  clearTimeout(t)
}

/** Builds the namespaces and starts the three processes; a failed start undoes what it did. */
export async function startNetnsDevnet(
  opts: { holePunching?: boolean; dir?: string } = {},
): Promise<NetnsDevnet> {
  const netns = await buildNetns(['relay', 'req'], ['prov'])
  const root = opts.dir ?? (await mkdtemp(join(tmpdir(), 'dms-netns-')))
  const procs: NsProc[] = []
  const stop = async () => {
    await Promise.all(procs.slice(1).map(stopProc))
    await stopProc(procs[0])
    await netns.teardown()
    if (opts.dir === undefined) await rm(root, { recursive: true, force: true })
  }
  // This process dies: its children and namespaces go with it (removeStale catches a SIGKILL).
  const onExit = () => procs.forEach((p) => p.child.kill('SIGKILL'))
  process.once('exit', onExit)
  try {
    const h = netns.hosts
    const dirs = { relay: join(root, 'relay'), req: join(root, 'req'), prov: join(root, 'prov') }
    const ids = { req: await peerIdOf(dirs.req), prov: await peerIdOf(dirs.prov) }
    const relay = await launch(
      root,
      'relay',
      h.relay.ns,
      {
        dataDir: dirs.relay,
        listen: [`/ip4/${h.relay.addr}/tcp/${PORT}`],
        network: { relay: { serve: true }, dht: { mode: 'server' } },
      },
      ['contract-db', 'run'],
    )
    procs.push(relay)
    const relayAddr = `/ip4/${h.relay.addr}/tcp/${PORT}/p2p/${relay.peerId}`
    const operator = new ApiClient(join(dirs.relay, 'contract-db.sock'))
    for (const peer of Object.values(ids)) await operator.ok('PUT', `/v1/contract-db/approved/${peer}`)
    await operator.ok('POST', `/v1/contract-db/accounts/${ids.req}/credit`, { amount: 100_000_000 })

    const providerCfg = (holePunching: boolean): NodeConfig => ({
      dataDir: dirs.prov,
      listen: [`/ip4/${h.prov.addr}/tcp/${PORT}`],
      bootstrap: [relayAddr],
      network: {
        relay: { reserve: true },
        dht: { mode: 'client', lookupIntervalMs: 2000 },
        nat: { holePunching },
      },
      provider: {
        contractDb: relay.peerId,
        offer: {
          cpu: 1,
          memoryBytes: 512 * MiB,
          diskBytes: 2048 * MiB,
          gpus: 0,
          prices: {
            perCpuHour: 1000,
            perGiBMemoryHour: 10,
            perGiBDiskHour: 0,
            perGpuHour: 0,
            minJobPrice: 1,
          },
        },
      },
    })
    const [requester, provider] = await Promise.all([
      launch(
        root,
        'requester',
        h.req.ns,
        {
          dataDir: dirs.req,
          listen: [`/ip4/${h.req.addr}/tcp/${PORT}`],
          bootstrap: [relayAddr],
          network: { dht: { mode: 'client', lookupIntervalMs: 2000 } },
          requester: { contractDb: { peer: relay.peerId, addrs: [relayAddr] }, bidWindowMs: 3000 },
        },
        ['run'],
      ),
      launch(root, 'provider', h.prov.ns, providerCfg(opts.holePunching ?? true), ['run']),
    ])
    procs.push(requester, provider)
    const net: NetnsDevnet = {
      root,
      netns,
      relay,
      requester,
      provider,
      api: new ApiClient(requester.socket),
      async restartProvider(o = {}) {
        await stopProc(net.provider)
        const p = await launch(root, 'provider', h.prov.ns, providerCfg(o.holePunching ?? true), ['run'])
        procs[2] = p
        net.provider = p
        return p
      },
      async stop() {
        process.off('exit', onExit)
        await stop()
      },
    }
    return net
  } catch (err) {
    process.off('exit', onExit)
    await stop()
    throw err
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const net = await startNetnsDevnet({ holePunching: !process.argv.includes('--no-hole-punching') })
  for (const p of [net.relay, net.requester, net.provider])
    process.stdout.write(
      `${p.name.padEnd(10)} ${p.ns.padEnd(16)} ${p.peerId}  socket ${p.socket}  log ${p.logPath}\n`,
    )
  process.stdout.write(
    `\nTry: dms peers --socket ${net.requester.socket}\nCtrl-C stops every process and deletes the namespaces.\n`,
  )
  await new Promise<void>((r) => {
    process.once('SIGINT', r)
    process.once('SIGTERM', r)
  })
  await net.stop()
}
