/** `dms key ...`: the node key in a data directory (sealed with a passphrase, dms/keys.ts). */
import { resolve } from 'node:path'
import { changePassphrase } from '../keys.js'
import { print, printData } from './output.js'
import { cliPassphrase } from './passphrase.js'
import { keyProblem } from './start-problem.js'

/** `dms key change-passphrase`. */
export async function changePassphraseCommand(o: { dataDir: string; json?: boolean }): Promise<void> {
  const dataDir = resolve(o.dataDir)
  const k = await changePassphrase(
    dataDir,
    cliPassphrase(),
    cliPassphrase('DMS_NEW_PASSPHRASE', 'key passphrase'),
  ).catch(keyProblem)
  const { peerIdFromPrivateKey } = await import('@libp2p/peer-id')
  const { privateKeyFromRaw } = await import('@libp2p/crypto/keys')
  const peerId = peerIdFromPrivateKey(privateKeyFromRaw(k.libp2pRaw())).toString()
  if (o.json) printData({ peerId, dataDir, changed: true })
  else print(`passphrase changed for ${peerId} in ${dataDir}`)
}
