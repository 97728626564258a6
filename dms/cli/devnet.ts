/**
 * `dms devnet --providers N`: a local network of separate processes on 127.0.0.1 (a contract-db,
 * N providers, a requester) with approved identities and a funded requester. `dms demo` runs on it.
 */
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { ApiClient } from '../api/client.js'
import { ConfigError, loadNodeConfig, type NodeConfig } from '../config.js'
import type { ContractDbConfig } from '../contract-db/node.js'
import { PASSPHRASE_ENV } from '../keys.js'
import { describePrice } from '../pricing/price.js'
import type { PriceTerms } from '../pricing/terms.js'
import { mergeSection, readProviderConfig, type ProviderConfigFile } from './devnet-provider-config.js'
import { priceOfFlags } from './price-flags.js'
import { BIN, childEnv, peerIdOf, startProcess, stopProcess, type DevnetProc } from './devnet-process.js'
import { CliError, print } from './output.js'

export type { DevnetProc } from './devnet-process.js'

/** A requester's settings in a node config. */
type RequesterConfig = NonNullable<NodeConfig['requester']>

const run = promisify(execFile)
const MiB = 1024 * 1024
/** What each devnet provider asks (micro-tokens); `job run`'s default max price is above it. */
export const DEVNET_PRICES = {
  perCpuHour: 1_200_000,
  perGiBMemoryHour: 10_000,
  perGiBDiskHour: 0,
  perGpuHour: 0,
  minJobPrice: 1,
}

export interface Devnet {
  root: string
  passphrase: string
  /** The contract-db (its first instance when there are several). */
  contractDb: DevnetProc
  /** Every contract-db instance (`contractDbInstances`): one key, one database, own addresses. */
  contractDbs: DevnetProc[]
  providers: DevnetProc[]
  requester: DevnetProc & { tokenFile: string }
  /** Runs `dms contract-db <args> --data-dir <contract-db dir>`. */
  operator: (...args: string[]) => Promise<{ stdout: string }>
  /**
   * Stops every process (SIGTERM: the nodes together, then the contract-db) and removes the root
   * unless kept. Resolves with each process's exit code (or the signal that ended it).
   */
  stop: () => Promise<Record<string, number | string | null>>
  /**
   * Starts the named process again (after it exited or was killed; rejects while it runs) with the
   * same data dir and config, listening on the same TCP port so its peers' addresses stay true. The
   * `DevnetProc` (in `providers`, `contractDb`, `requester`) is updated in place; `env` is added to
   * this start's environment (a fault point). `scripts/chaos.ts`.
   */
  restart: (name: string, env?: NodeJS.ProcessEnv) => Promise<DevnetProc>
  /**
   * Starts one more requester (approved, credited `credit`) with `requester` settings and `env`
   * added to its environment (a fault point). `scripts/chaos.ts`.
   */
  addRequester: (
    name: string,
    credit: number,
    requester?: Partial<RequesterConfig>,
    env?: NodeJS.ProcessEnv,
  ) => Promise<DevnetProc>
}

export interface DevnetInit {
  providers: number
  /** Per-provider price per cpu-hour (micro-tokens). @default 1200000 each */
  prices?: number[]
  /** The price terms the providers bid instead (specs/pricing.md: per result, fixed). @default per hour */
  price?: PriceTerms
  /** Where to keep data and logs. @default a new temp dir, removed at stop unless `keep` */
  dir?: string
  keep?: boolean
  /** Progress lines. @default none */
  say?: (line: string) => void
  /** Credited to the requester. @default 100000000 */
  credit?: number
  /** Contract-db deadline settings (short ones for the chaos run). @default the contract-db's */
  contractDb?: Pick<ContractDbConfig, 'settleGraceMs' | 'claimWindowMs' | 'expirySweepMs'>
  /** Added to the contract-db's environment at its first start only (a fault point). */
  contractDbEnv?: NodeJS.ProcessEnv
  /** Where the contract-db keeps its books (specs/config.md). @default level in its data dir */
  contractDbStore?: ContractDbConfig['store']
  /**
   * Contract-db instances: more than one needs a shared `contractDbStore` (PostgreSQL). Each is a
   * process of its own with a copy of the first one's key (specs/contract-db.md, "Several
   * instances"), named `contract-db`, `contract-db-2`...; parties know every instance's addresses.
   * @default 1
   */
  contractDbInstances?: number
  /** How often providers claim contracts past settleBy. @default the provider's */
  claimSweepMs?: number
  /**
   * Merged into each provider's `provider` section (objects merged, other values replaced), e.g.
   * its engines, process engine and offer; checked as the provider checks its config before
   * anything starts. `from` names it in errors (`--provider-config FILE`).
   * @default none: 1 cpu, 512 MiB, 4 GiB disk, no GPU, the default engines
   */
  providerConfig?: ProviderConfigFile
}

const letter = (i: number) => (i < 26 ? String.fromCharCode(97 + i) : `p${i}`)

/**
 * Starts a devnet and resolves once the requester's gossip view includes every provider. A failed
 * start stops what it started.
 */
export async function startDevnet(init: DevnetInit): Promise<Devnet> {
  if (!Number.isInteger(init.providers) || init.providers < 1 || init.providers > 26)
    throw new CliError('--providers must be a whole number from 1 to 26')
  const say = init.say ?? (() => undefined)
  const root = init.dir !== undefined ? resolve(init.dir) : await mkdtemp(join(tmpdir(), 'dms-devnet-'))
  const keep = init.keep === true || init.dir !== undefined
  await mkdir(root, { recursive: true, mode: 0o700 })
  const procs: DevnetProc[] = []
  // How each process was started, for `restart`.
  const started = new Map<
    string,
    { cfg: (NodeConfig | ContractDbConfig) & { dataDir: string }; command: string[] }
  >()
  let env: NodeJS.ProcessEnv = {}
  const launch = async (
    name: string,
    cfg: (NodeConfig | ContractDbConfig) & { dataDir: string },
    command = ['run'],
    extra?: NodeJS.ProcessEnv,
  ) => {
    started.set(name, { cfg, command })
    return startProcess(root, name, cfg, { ...env, ...extra }, command)
  }
  const restart = async (name: string, extra?: NodeJS.ProcessEnv) => {
    const p = procs.find((q) => q.name === name)
    const how = started.get(name)
    if (p === undefined || how === undefined) throw new CliError(`no devnet process named ${name}`)
    if (p.child.exitCode === null && p.child.signalCode === null)
      throw new CliError(`${name} is still running (pid ${p.child.pid})`)
    const listen = p.addrs.map((a) => a.replace(/\/p2p\/[^/]+$/, ''))
    const fresh = await startProcess(root, name, { ...how.cfg, listen }, { ...env, ...extra }, how.command)
    return Object.assign(p, fresh)
  }
  // The children run in their own process groups: if this process dies, do not leave them behind.
  const killAll = () => procs.forEach((p) => p.child.kill('SIGKILL'))
  process.once('exit', killAll)
  const stop = async () => {
    const exits: Record<string, number | string | null> = {}
    // The nodes together, then the contract-db instances they settle with.
    const isCdb = (p: DevnetProc) => /^contract-db(-\d+)?$/.test(p.name)
    const stopAll = (ps: DevnetProc[]) =>
      Promise.all(ps.map(async (p) => (exits[p.name] = await stopProcess(p))))
    await stopAll(procs.filter((p) => !isCdb(p)))
    await stopAll(procs.filter(isCdb))
    procs.length = 0
    process.off('exit', killAll)
    if (!keep) await rm(root, { recursive: true, force: true })
    return exits
  }
  try {
    say(`DMS devnet on 127.0.0.1 (data and logs in ${root})`)
    // Keys are sealed at rest: DMS_PASSPHRASE when set, else a throwaway one for this devnet.
    let passphrase = process.env[PASSPHRASE_ENV]
    if (!passphrase) {
      const kept = join(root, 'passphrase')
      passphrase = await readFile(kept, 'utf8').catch(() => randomBytes(16).toString('hex'))
      if (keep) {
        await writeFile(kept, passphrase, { mode: 0o600 })
        say(`  keys sealed with a generated passphrase, kept in ${kept}`)
      }
    }
    env = childEnv(passphrase)
    const names = Array.from({ length: init.providers }, (_, i) => `provider-${letter(i)}`)
    const dirs = {
      cdb: join(root, 'contract-db'),
      req: join(root, 'requester'),
      ...Object.fromEntries(names.map((n) => [n, join(root, n)])),
    } as Record<string, string>
    for (const d of Object.values(dirs)) await mkdir(d, { recursive: true, mode: 0o700 })
    const ids: Record<string, string> = { req: await peerIdOf(dirs.req, passphrase) }
    for (const n of names) ids[n] = await peerIdOf(dirs[n], passphrase)
    const base = { listen: ['/ip4/127.0.0.1/tcp/0'], oneHost: true }

    const providerCfg = (i: number, dataDir: string, contractDb: string, bootstrap: string[]) => {
      const perCpuHour = init.prices?.[i] ?? DEVNET_PRICES.perCpuHour
      const own = {
        ...(init.claimSweepMs !== undefined ? { claimSweepMs: init.claimSweepMs } : {}),
        ...(init.price !== undefined ? { price: init.price } : {}),
        offer: {
          cpu: 1,
          memoryBytes: 512 * MiB,
          // Room for 16 jobs at the default disk quota (256 MiB) each.
          diskBytes: 4096 * MiB,
          gpus: 0,
          prices: { ...DEVNET_PRICES, perCpuHour },
        },
      }
      const extra = init.providerConfig?.section ?? {}
      return {
        ...base,
        dataDir,
        bootstrap,
        // A TCP listener for its dashboard (`dms dashboard --socket <its socket>`).
        api: { tcp: { port: 0 } },
        provider: { ...mergeSection(own, extra), contractDb },
      } as NodeConfig & { dataDir: string }
    }
    if (init.providerConfig !== undefined) {
      // Checked as each provider will check it, before any process starts (a peer id stands in
      // for the contract-db's, not known yet).
      const { from } = init.providerConfig
      try {
        for (const [i, name] of names.entries())
          loadNodeConfig(providerCfg(i, dirs[name], ids.req, []), {}, from)
      } catch (err) {
        if (err instanceof ConfigError || err instanceof CliError)
          throw new CliError(err instanceof CliError ? `${from}: ${err.message}` : err.message)
        throw err
      }
    }

    const instances = init.contractDbInstances ?? 1
    if (!Number.isInteger(instances) || instances < 1 || instances > 8)
      throw new CliError('contractDbInstances must be a whole number from 1 to 8')
    if (instances > 1 && init.contractDbStore?.backend !== 'postgres')
      throw new CliError('several contract-db instances need one PostgreSQL database (contractDbStore)')
    const cdbConfig = (name: string, dataDir: string) => ({
      ...base,
      web: { port: 0 },
      ...init.contractDb,
      ...(init.contractDbStore !== undefined ? { store: init.contractDbStore } : {}),
      ...(instances > 1 ? { instance: name } : {}),
      dataDir,
    })
    const cdb = await launch(
      'contract-db',
      cdbConfig('contract-db', dirs.cdb),
      ['contract-db', 'run'],
      init.contractDbEnv,
    )
    procs.push(cdb)
    const cdbs = [cdb]
    for (let i = 2; i <= instances; i++) {
      const name = `contract-db-${i}`
      const dataDir = join(root, name)
      await mkdir(dataDir, { recursive: true, mode: 0o700 })
      // Step A: every instance holds the contract-db's key.
      await copyFile(join(dirs.cdb, 'node.key'), join(dataDir, 'node.key'))
      const more = await launch(name, cdbConfig(name, dataDir), ['contract-db', 'run'])
      procs.push(more)
      cdbs.push(more)
    }
    const cdbAddrs = cdbs.flatMap((c) => c.addrs)
    const operator = (...args: string[]) =>
      run(process.execPath, [BIN, 'contract-db', ...args, '--data-dir', dirs.cdb], { env }).catch(
        (err: unknown) => {
          throw new CliError(
            `dms contract-db ${args.join(' ')} failed: ${(err as { stderr?: string }).stderr ?? String(err)}`,
          )
        },
      )
    for (const peer of Object.values(ids)) await operator('approve', peer)
    const credit = init.credit ?? 100_000_000
    await operator('credit', ids.req, String(credit))
    say(
      `  contract-db  ${cdb.peerId}  (dms contract-db run) approved ${init.providers + 1} peers, credited the requester ${credit}`,
    )
    const providers: DevnetProc[] = []
    for (const [i, name] of names.entries()) {
      const cfg = providerCfg(i, dirs[name], cdb.peerId, cdbAddrs)
      const p = await launch(name, cfg)
      procs.push(p)
      providers.push(p)
      const offer = cfg.provider?.offer
      const asks =
        init.price === undefined ? `${offer?.prices.perCpuHour}/cpu-hour` : describePrice(init.price)
      const gpus = offer?.gpus ? `, ${offer.gpus} GPU` : ''
      say(
        `  ${name.padEnd(11)}  ${p.peerId}  offers ${offer?.cpu} cpu, ${Math.round((offer?.memoryBytes ?? 0) / MiB)} MiB${gpus} at ${asks}`,
      )
    }
    const requesterCfg = (dataDir: string, more: Partial<RequesterConfig> = {}) => ({
      ...base,
      dataDir,
      bootstrap: providers.flatMap((p) => p.addrs),
      api: { tcp: { port: 0 } },
      requester: { contractDb: { peer: cdb.peerId, addrs: cdbAddrs }, bidWindowMs: 3000, ...more },
    })
    const req = await launch('requester', requesterCfg(dirs.req))
    procs.push(req)
    const tokenFile = join(dirs.req, 'api-token')
    say(
      `  requester    ${req.peerId}  REST API on ${req.socket} and http://${req.tcp} (token in ${tokenFile})`,
    )

    // Bounded wait until the requester's gossip view includes every provider.
    const api = new ApiClient(req.socket)
    for (let i = 0; ; i++) {
      const { bidTopicPeers } = await api.ok<{ bidTopicPeers: number }>('GET', '/v1/info')
      if (bidTopicPeers >= init.providers) break
      if (i > 100) throw new CliError(`the requester did not see all ${init.providers} providers within 15 s`)
      await new Promise((r) => setTimeout(r, 150))
    }
    return {
      root,
      passphrase,
      contractDb: cdb,
      contractDbs: cdbs,
      providers,
      // The same object as in `procs`, so `restart` updates it.
      requester: Object.assign(req, { tokenFile }),
      operator,
      stop,
      restart,
      addRequester: async (name, amount, more, extra) => {
        const dataDir = join(root, name)
        await mkdir(dataDir, { recursive: true, mode: 0o700 })
        const peer = await peerIdOf(dataDir, passphrase)
        await operator('approve', peer)
        await operator('credit', peer, String(amount))
        const p = await launch(name, requesterCfg(dataDir, more), ['run'], extra)
        procs.push(p)
        return p
      },
    }
  } catch (err) {
    await stop()
    throw err
  }
}

/** `dms devnet`: starts a devnet, prints where everything is, and runs until SIGINT/SIGTERM. */
export async function devnetCommand(opts: {
  providers: string
  dir?: string
  keep?: boolean
  json?: boolean
  pricePerResult?: string
  priceFixed?: string
  providerConfig?: string
}): Promise<void> {
  const n = Number(opts.providers)
  const price = priceOfFlags(opts)
  const providerConfig =
    opts.providerConfig !== undefined ? await readProviderConfig(opts.providerConfig) : undefined
  let interrupted = false
  const early = () => (interrupted = true)
  process.once('SIGINT', early)
  process.once('SIGTERM', early)
  const net = await startDevnet({
    providers: n,
    dir: opts.dir,
    keep: opts.keep,
    price,
    providerConfig,
    say: opts.json ? undefined : print,
  })
  const view = (p: DevnetProc) => ({
    name: p.name,
    peerId: p.peerId,
    addrs: p.addrs,
    socket: p.socket,
    dataDir: p.dataDir,
    log: p.logPath,
  })
  if (opts.json)
    process.stdout.write(
      `${JSON.stringify({
        event: 'devnet-ready',
        root: net.root,
        contractDb: { ...view(net.contractDb), tcp: net.contractDb.tcp },
        providers: net.providers.map((p) => ({ ...view(p), tcp: p.tcp })),
        requester: { ...view(net.requester), tcp: net.requester.tcp, tokenFile: net.requester.tokenFile },
      })}\n`,
    )
  else {
    print(
      `\nready. Try:\n  dms job run --socket ${net.requester.socket} --wait --image dms-test:1 -- echo hi`,
    )
    print(`  dms peers --socket ${net.requester.socket}`)
    print(`  dms dashboard --socket ${net.requester.socket}   (a one-time link to the web page)`)
    print(
      `  dms contract-db dashboard --data-dir ${net.contractDb.dataDir}   (the contract-db operator's page)`,
    )
    print('Ctrl-C stops every process.')
  }
  await new Promise<void>((resolveStop) => {
    const onSignal = () => {
      process.off('SIGINT', onSignal)
      process.off('SIGTERM', onSignal)
      process.once('SIGINT', () => process.exit(130))
      process.once('SIGTERM', () => process.exit(130))
      resolveStop()
    }
    process.off('SIGINT', early)
    process.off('SIGTERM', early)
    if (interrupted) return resolveStop()
    process.on('SIGINT', onSignal)
    process.on('SIGTERM', onSignal)
  })
  if (!opts.json) print('stopping the devnet…')
  const exits = await net.stop()
  if (opts.json) process.stdout.write(`${JSON.stringify({ event: 'devnet-stopped', exits })}\n`)
  else
    print(
      `stopped (exit codes: ${Object.entries(exits)
        .map(([n, c]) => `${n} ${c}`)
        .join(', ')})`,
    )
}
