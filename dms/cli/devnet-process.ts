/**
 * The devnet's processes (devnet.ts): each started as the built CLI in its own process group with
 * a config file, ready once it prints its ready line; stopped with SIGTERM, then SIGKILL.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { createWriteStream, existsSync } from 'node:fs'
import { readFile, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { privateKeyFromRaw } from '@libp2p/crypto/keys'
import { ENV_OVERRIDES, type NodeConfig } from '../config.js'
import type { ContractDbConfig } from '../contract-db/node.js'
import { loadOrCreateKey, PASSPHRASE_ENV } from '../keys.js'
import { CliError } from './output.js'

// The `dms` launcher of this package, found from this file wherever it runs: the bundle
// (dist/cli/), tsc's output (dist/dms/cli/) or the source (scripts run with tsx).
export const BIN = packageBin(dirname(fileURLToPath(import.meta.url)))

function packageBin(dir: string): string {
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir)
  return join(dir, 'bin', 'dms.js')
}
const READY_TIMEOUT_MS = 60_000

export interface DevnetProc {
  name: string
  child: ChildProcess
  peerId: string
  addrs: string[]
  socket: string
  /** `host:port` of the TCP API listener (the requester's), if any. */
  tcp?: string
  dataDir: string
  logPath: string
}

export async function peerIdOf(dataDir: string, passphrase: string): Promise<string> {
  const { key } = await loadOrCreateKey(dataDir, () => Promise.resolve(passphrase))
  return peerIdFromPrivateKey(privateKeyFromRaw(key.libp2pRaw())).toString()
}

/** The children's environment: the passphrase, and none of the `DMS_*` config overrides. */
export function childEnv(passphrase: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, [PASSPHRASE_ENV]: passphrase }
  for (const o of ENV_OVERRIDES) if (o.env !== 'DMS_LOG_LEVEL') delete env[o.env]
  delete env.DMS_CONTRACT_DB_DIR
  return env
}

/** Starts `dms run` (or `command`, e.g. `contract-db run`) and resolves with its ready line. */
export async function startProcess(
  root: string,
  name: string,
  cfg: (NodeConfig | ContractDbConfig) & { dataDir: string },
  env: NodeJS.ProcessEnv,
  command = ['run'],
): Promise<DevnetProc> {
  const cfgPath = join(root, `${name}.json`)
  await writeFile(cfgPath, JSON.stringify(cfg, null, 2))
  const logPath = join(root, `${name}.log`)
  const child = spawn(process.execPath, [BIN, ...command, '--config', cfgPath], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env,
    // Its own process group: a terminal's Ctrl-C reaches only the devnet, which stops each child once.
    detached: true,
  })
  child.stderr?.pipe(createWriteStream(logPath))
  const lines = createInterface({ input: child.stdout })
  // Bounded: a process that never gets ready is killed (and reported by onExit).
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    child.kill('SIGKILL')
  }, READY_TIMEOUT_MS)
  return new Promise((resolvePromise, reject) => {
    const onExit = (code: number | null) =>
      void readFile(logPath, 'utf8')
        .catch(() => '')
        .then((log) =>
          reject(
            new CliError(
              `${name} ${timedOut ? `was not ready within ${READY_TIMEOUT_MS / 1000} s (killed)` : `exited (code ${code}) before it was ready`}:\n${log.split('\n').slice(-15).join('\n')}`,
            ),
          ),
        )
    child.once('exit', onExit)
    lines.on('line', (line) => {
      try {
        const ready = JSON.parse(line) as {
          event?: string
          peerId: string
          addrs: string[]
          socket: string
          tcp?: string | null
        }
        if (ready.event !== 'ready') return
        clearTimeout(timer)
        child.off('exit', onExit)
        resolvePromise({
          name,
          child,
          peerId: ready.peerId,
          addrs: ready.addrs,
          socket: ready.socket,
          tcp: ready.tcp ?? undefined,
          dataDir: cfg.dataDir,
          logPath,
        })
      } catch {
        /* not the ready line */
      }
    })
  })
}

/** SIGTERM, then SIGKILL if the process has not exited within `graceMs`; its exit code or signal. */
export async function stopProcess(p: DevnetProc, graceMs = 15_000): Promise<number | string | null> {
  const status = () => p.child.exitCode ?? p.child.signalCode
  if (status() !== null) return status()
  const exited = new Promise((r) => p.child.once('exit', r))
  p.child.kill('SIGTERM')
  const timer = setTimeout(() => p.child.kill('SIGKILL'), graceMs)
  await exited
  clearTimeout(timer)
  return status()
}
