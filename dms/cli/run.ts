import { testHooksFromEnv } from '../test-hooks.js'
import { readFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { ConfigError, LOG_LEVELS, loadNodeConfig, type NodeConfig } from '../config.js'
import { loadOrCreateKey } from '../keys.js'
import { createLogger } from '../log.js'
import { DmsNode } from '../node.js'
import { ProcessGuard } from '../process-guard.js'
import { CliError, cliLogger, print, printData } from './output.js'
import { compactHeap } from './compact-heap.js'
import { cliPassphrase } from './passphrase.js'
import { keyProblem, startProblem } from './start-problem.js'

/**
 * Reads the config file (optional), applies `DMS_*` overrides from the environment and validates
 * the result (specs/config.md). With no file, `dataDir` comes from DMS_DATA_DIR or `defaultDataDir`.
 */
export async function readConfig(
  path: string | undefined,
  env: Record<string, string | undefined> = process.env,
  defaultDataDir?: string,
): Promise<NodeConfig> {
  let file: unknown = {}
  if (path !== undefined) {
    let text: string
    try {
      text = await readFile(path, 'utf8')
    } catch (err) {
      throw new CliError(`cannot read config ${path}: ${(err as Error).message}`)
    }
    try {
      file = JSON.parse(text)
    } catch (err) {
      throw new CliError(`config ${path} is not valid JSON: ${(err as Error).message}`)
    }
  }
  if (
    defaultDataDir !== undefined &&
    typeof file === 'object' &&
    file !== null &&
    !('dataDir' in file) &&
    !env.DMS_DATA_DIR
  )
    file = { ...file, dataDir: defaultDataDir }
  try {
    return loadNodeConfig(file, env, path === undefined ? 'config' : `config ${path}`)
  } catch (err) {
    if (err instanceof ConfigError) throw new CliError(err.message)
    throw err
  }
}

/**
 * `dms init`: creates the node's key in its data directory, sealed with the passphrase
 * (DMS_PASSPHRASE or a prompt), and prints its peer id. A plain key file of dms 0.1 is sealed.
 */
export async function initCommand(opts: { dataDir: string; json?: boolean }): Promise<void> {
  const dataDir = resolve(opts.dataDir)
  const { key, created, migrated } = await loadOrCreateKey(dataDir, cliPassphrase()).catch(keyProblem)
  const { peerIdFromPrivateKey } = await import('@libp2p/peer-id')
  const { privateKeyFromRaw } = await import('@libp2p/crypto/keys')
  const peerId = peerIdFromPrivateKey(privateKeyFromRaw(key.libp2pRaw())).toString()
  if (opts.json) printData({ peerId, dataDir, created, migrated })
  else {
    if (migrated) print(`warning: ${dataDir}/node.key was a plain key file; it is now sealed`)
    print(`${created ? 'created' : 'existing'} identity ${peerId} in ${dataDir}`)
  }
}

/** How long a graceful stop lets a provider's runs finish when the config does not say. */
export const DEFAULT_STOP_DRAIN_SECONDS = 60

/**
 * `dms run`: starts a node and runs until SIGINT/SIGTERM; the first signal stops it in order
 * (API, requester, provider, network, database), a second one exits at once (code 130).
 * Prints one JSON line `{"event":"ready",...}` on stdout once it serves; logs go to stderr.
 */
export async function runCommand(opts: {
  config?: string
  dataDir?: string
  logLevel?: string
  defaultDataDir: string
}): Promise<void> {
  const cfg = await readConfig(opts.config, process.env, opts.defaultDataDir)
  if (opts.dataDir !== undefined) cfg.dataDir = opts.dataDir
  if (opts.logLevel !== undefined) {
    if (!(LOG_LEVELS as readonly string[]).includes(opts.logLevel))
      throw new CliError(`--log-level must be one of ${LOG_LEVELS.join(', ')}`)
    cfg.log = { level: opts.logLevel as NonNullable<NodeConfig['log']>['level'] }
  }
  cfg.dataDir = resolve(cfg.dataDir)
  const log = cliLogger(() => createLogger({ level: cfg.log?.level }))
  const guard = new ProcessGuard({ log })
  const node = new DmsNode(cfg, {
    log,
    passphrase: cliPassphrase(),
    faults: guard,
    testHooks: testHooksFromEnv(process.env),
    onStopRequest: () => stop('drained'),
  })
  // Signals during start are honoured once the node is up (it stops what it started).
  let signalled: string | undefined
  let started = false
  let stopping: Promise<void> | undefined
  let onStopped: () => void = () => undefined
  const stopped = new Promise<void>((r) => (onStopped = r))
  const stop = (sig: string) => {
    if (stopping !== undefined) return
    log.info({ sig }, 'stopping (send the signal again to exit at once)')
    const t0 = Date.now()
    // A provider finishes its runs first, up to provider.stopDrainSeconds (specs/node-lifecycle.md).
    const drainMs = (cfg.provider?.stopDrainSeconds ?? DEFAULT_STOP_DRAIN_SECONDS) * 1000
    stopping = node.stop({ drainMs }).then(() => {
      log.info({ ms: Date.now() - t0 }, 'stopped')
      onStopped()
    })
  }
  const onSignal = (sig: string) => {
    if (signalled !== undefined) {
      log.warn({ sig }, 'second signal: exiting now')
      process.exit(130)
    }
    signalled = sig
    if (started) stop(sig)
  }
  process.on('SIGINT', () => onSignal('SIGINT'))
  process.on('SIGTERM', () => onSignal('SIGTERM'))
  try {
    await node.start()
  } catch (err) {
    await startProblem(err, {
      dataDir: cfg.dataDir,
      listen: cfg.listen,
      apiTcpField: 'api.tcp (DMS_API_PORT)',
    })
  }
  started = true
  // Serving: from here an error a dependency throws asynchronously is logged and counted, and the
  // node goes on (specs/protocol.md, "Faults a node survives"). Before this, a failed start exits.
  guard.install()
  process.stdout.write(
    `${JSON.stringify({
      event: 'ready',
      peerId: node.peerId,
      addrs: node.addrs(),
      socket: node.socketPath ?? null,
      tcp: node.apiTcpAddress ?? null,
      metrics: node.metricsListener?.address ?? null,
      dataDir: cfg.dataDir,
    })}\n`,
  )
  log.info(
    { peerId: node.peerId, addrs: node.addrs(), socket: node.socketPath, tcp: node.apiTcpAddress },
    'dms node running',
  )
  compactHeap() // the start's garbage given back before the node idles (compact-heap.ts)
  if (signalled !== undefined) stop(signalled)
  await stopped
  // Everything is closed; libp2p can leave timers (dial backoff, ~2 s) that would delay the exit.
  log.flush()
  process.exit(0)
}
