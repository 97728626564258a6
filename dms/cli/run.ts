import { readFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import type { NodeConfig } from '../config.js'
import { KeyFileError, loadOrCreateKey, PassphraseRequiredError, WrongPassphraseError } from '../keys.js'
import { createLogger } from '../log.js'
import { DmsNode } from '../node.js'
import { DataDirInUseError } from '../store/db.js'
import { CliError, print, printJson } from './output.js'
import { cliPassphrase } from './passphrase.js'

/** Key errors are the user's to fix: shown as a message, never a stack. */
export function keyProblem(err: unknown): never {
  if (
    err instanceof PassphraseRequiredError ||
    err instanceof WrongPassphraseError ||
    err instanceof KeyFileError
  )
    throw new CliError(err.message)
  throw err
}

export async function readConfig(path: string): Promise<NodeConfig> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (err) {
    throw new CliError(`cannot read config ${path}: ${(err as Error).message}`)
  }
  let cfg: NodeConfig
  try {
    cfg = JSON.parse(text) as NodeConfig
  } catch (err) {
    throw new CliError(`config ${path} is not valid JSON: ${(err as Error).message}`)
  }
  if (typeof cfg.dataDir !== 'string' || cfg.dataDir === '')
    throw new CliError(`config ${path}: "dataDir" is required`)
  return cfg
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
  if (opts.json) printJson({ peerId, dataDir, created, migrated })
  else {
    if (migrated) print(`warning: ${dataDir}/node.key was a plain key file; it is now sealed`)
    print(`${created ? 'created' : 'existing'} identity ${peerId} in ${dataDir}`)
  }
}

/**
 * `dms run`: starts a node and runs until SIGINT/SIGTERM (a second signal forces exit).
 * Prints one JSON line `{"event":"ready",...}` on stdout once it serves; logs go to stderr.
 */
export async function runCommand(opts: { config: string; dataDir?: string }): Promise<void> {
  const cfg = await readConfig(opts.config)
  if (opts.dataDir !== undefined) cfg.dataDir = opts.dataDir
  cfg.dataDir = resolve(cfg.dataDir)
  const log = createLogger()
  const node = new DmsNode(cfg, { log, passphrase: cliPassphrase() })
  try {
    await node.start()
  } catch (err) {
    if (err instanceof DataDirInUseError) throw new CliError(err.message)
    keyProblem(err)
  }
  process.stdout.write(
    `${JSON.stringify({ event: 'ready', peerId: node.peerId, addrs: node.addrs(), socket: node.socketPath ?? null })}\n`,
  )
  log.info({ peerId: node.peerId, addrs: node.addrs(), socket: node.socketPath }, 'dms node running')
  await new Promise<void>((resolveStop) => {
    let stopping = false
    const onSignal = (sig: string) => {
      if (stopping) {
        log.warn({ sig }, 'second signal: exiting now')
        process.exit(130)
      }
      stopping = true
      log.info({ sig }, 'stopping')
      void node.stop().then(resolveStop)
    }
    process.on('SIGINT', () => onSignal('SIGINT'))
    process.on('SIGTERM', () => onSignal('SIGTERM'))
  })
}
