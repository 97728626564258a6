import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { KeyPair } from '../actors/identity.js'

/**
 * The node's key file, `<dataDir>/node.key` (mode 0600). Sealing it with a passphrase is
 * tracked separately; for now the file's mode is its only protection.
 */
export async function loadOrCreateKey(dataDir: string): Promise<{ key: KeyPair; created: boolean }> {
  const path = join(dataDir, 'node.key')
  try {
    const { seed } = JSON.parse(await readFile(path, 'utf8')) as { seed: string }
    return { key: KeyPair.fromSeed(new Uint8Array(Buffer.from(seed, 'base64'))), created: false }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new Error(`cannot read key file ${path}: ${(err as Error).message}`)
  }
  await mkdir(dataDir, { recursive: true, mode: 0o700 })
  const key = KeyPair.generate()
  await writeFile(path, JSON.stringify({ type: 'ed25519', seed: Buffer.from(key.seed).toString('base64') }), {
    mode: 0o600,
    flag: 'wx',
  })
  await chmod(path, 0o600)
  return { key, created: true }
}
