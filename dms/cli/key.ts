/** `dms key ...`: the node key in a data directory (sealed with a passphrase, dms/keys.ts). */
import { resolve } from 'node:path'
import type { Command } from 'commander'
import { changePassphrase } from '../keys.js'
import { print, printJson } from './output.js'
import { cliPassphrase } from './passphrase.js'
import { keyProblem } from './start-problem.js'

export function registerKeyCommands(program: Command, defaultDataDir: string): void {
  const key = program.command('key').description("the node's key, sealed at rest with a passphrase")
  key
    .command('change-passphrase')
    .description(
      're-seal the node key with a new passphrase (the peer id stays). Current: DMS_PASSPHRASE or asked; new: DMS_NEW_PASSPHRASE or asked twice',
    )
    .option('--data-dir <dir>', 'data directory', defaultDataDir)
    .option('--json', 'print JSON')
    .action(async (o: { dataDir: string; json?: boolean }) => {
      const dataDir = resolve(o.dataDir)
      const k = await changePassphrase(
        dataDir,
        cliPassphrase(),
        cliPassphrase('DMS_NEW_PASSPHRASE', 'key passphrase'),
      ).catch(keyProblem)
      const { peerIdFromPrivateKey } = await import('@libp2p/peer-id')
      const { privateKeyFromRaw } = await import('@libp2p/crypto/keys')
      const peerId = peerIdFromPrivateKey(privateKeyFromRaw(k.libp2pRaw())).toString()
      if (o.json) printJson({ peerId, dataDir, changed: true })
      else print(`passphrase changed for ${peerId} in ${dataDir}`)
    })
}
