/**
 * The node's key file, `<dataDir>/node.key`: the Ed25519 seed sealed with a passphrase
 * (scrypt -> AES-256-GCM, node:crypto), mode 0600. Spec: specs/config.md ("Key file").
 */
import { createCipheriv, createDecipheriv, randomBytes, scrypt as scryptCb } from 'node:crypto'
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { DmsError } from '../actors/errors.js'
import { KeyPair } from '../actors/identity.js'

/**
 * Where the passphrase comes from: the environment, a prompt, a test. `purpose` says whether it
 * unseals an existing key or seals a new one (a prompt then asks twice).
 */
export type PassphraseSource = (purpose?: 'unseal' | 'seal') => Promise<string>

export const PASSPHRASE_ENV = 'DMS_PASSPHRASE'

export class PassphraseRequiredError extends DmsError {
  constructor(path: string) {
    super(
      'PASSPHRASE_REQUIRED',
      `the key file ${path} is sealed with a passphrase: set ${PASSPHRASE_ENV} in the environment ` +
        `(or run in a terminal to be asked for it)`,
    )
  }
}

export class WrongPassphraseError extends DmsError {
  constructor(path: string) {
    super('WRONG_PASSPHRASE', `cannot unseal ${path}: wrong passphrase (or the file was altered)`)
  }
}

export class KeyFileError extends DmsError {
  constructor(message: string) {
    super('BAD_KEY_FILE', message)
  }
}

/** A passphrase from DMS_PASSPHRASE; fails with how to set it when absent or empty. */
export function envPassphrase(env: NodeJS.ProcessEnv = process.env): PassphraseSource {
  return () => {
    const p = env[PASSPHRASE_ENV]
    if (p === undefined || p === '') return Promise.reject(new PassphraseRequiredError('node.key'))
    return Promise.resolve(p)
  }
}

/** scrypt cost: N=2^15, r=8 (32 MiB, ~100 ms here): OWASP's minimum for scrypt. */
const KDF = { N: 32768, r: 8, p: 1 } as const
const AAD = Buffer.from('dms/node-key/v2')

interface SealedKeyFile {
  type: 'ed25519'
  version: 2
  kdf: { name: 'scrypt'; N: number; r: number; p: number; salt: string }
  cipher: { name: 'aes-256-gcm'; iv: string; tag: string }
  ciphertext: string
}

function scrypt(pass: string, salt: Buffer, o: { N: number; r: number; p: number }): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scryptCb(pass.normalize('NFKC'), salt, 32, { ...o, maxmem: 256 * o.N * o.r }, (err, k) =>
      err ? reject(err) : resolve(k),
    ),
  )
}

/** Seals a seed with a passphrase. */
export async function sealSeed(seed: Uint8Array, passphrase: string): Promise<SealedKeyFile> {
  const salt = randomBytes(16)
  const iv = randomBytes(12)
  const kek = await scrypt(passphrase, salt, KDF)
  const c = createCipheriv('aes-256-gcm', kek, iv)
  c.setAAD(AAD)
  const ciphertext = Buffer.concat([c.update(seed), c.final()])
  return {
    type: 'ed25519',
    version: 2,
    kdf: { name: 'scrypt', ...KDF, salt: salt.toString('base64') },
    cipher: { name: 'aes-256-gcm', iv: iv.toString('base64'), tag: c.getAuthTag().toString('base64') },
    ciphertext: ciphertext.toString('base64'),
  }
}

/** Opens a sealed key file's content; WrongPassphraseError when the tag does not verify. */
export async function unsealSeed(file: SealedKeyFile, passphrase: string, path: string): Promise<Uint8Array> {
  const { N, r, p, salt } = file.kdf
  if (![N, r, p].every((v) => Number.isSafeInteger(v) && v > 0) || N > 2 ** 20 || r > 32 || p > 16)
    throw new KeyFileError(`${path}: scrypt parameters out of range`)
  const kek = await scrypt(passphrase, Buffer.from(salt, 'base64'), { N, r, p })
  const d = createDecipheriv('aes-256-gcm', kek, Buffer.from(file.cipher.iv, 'base64'))
  d.setAAD(AAD)
  d.setAuthTag(Buffer.from(file.cipher.tag, 'base64'))
  try {
    return new Uint8Array(Buffer.concat([d.update(Buffer.from(file.ciphertext, 'base64')), d.final()]))
  } catch {
    throw new WrongPassphraseError(path)
  }
}

async function writeAtomically(path: string, content: string): Promise<void> {
  const tmp = `${path}.${randomBytes(4).toString('hex')}.tmp`
  await writeFile(tmp, content, { mode: 0o600, flag: 'wx' })
  await chmod(tmp, 0o600)
  await rename(tmp, path)
}

export interface LoadedKey {
  key: KeyPair
  created: boolean
  /** The file was in the plain format of dms 0.1 and has been sealed in place. */
  migrated: boolean
}

/**
 * Loads the node key, unsealing it with the passphrase; creates and seals a new one when there is
 * none. A plain key file of the previous format (`{"type":"ed25519","seed":...}`) is sealed in
 * place (atomically, mode 0600) and reported as `migrated` so the caller can warn.
 */
export async function loadOrCreateKey(dataDir: string, passphrase: PassphraseSource): Promise<LoadedKey> {
  const path = join(dataDir, 'node.key')
  const ask = async (purpose: 'unseal' | 'seal' = 'unseal') => {
    try {
      return await passphrase(purpose)
    } catch (err) {
      if (err instanceof PassphraseRequiredError) throw new PassphraseRequiredError(path)
      throw err
    }
  }
  let text: string | undefined
  try {
    text = await readFile(path, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new KeyFileError(`cannot read key file ${path}: ${(err as Error).message}`)
  }
  if (text !== undefined) {
    let parsed: Partial<SealedKeyFile> & { seed?: string }
    try {
      parsed = JSON.parse(text) as typeof parsed
    } catch {
      throw new KeyFileError(`key file ${path} is not JSON`)
    }
    if (parsed.version === 2 && parsed.kdf?.name === 'scrypt' && parsed.cipher?.name === 'aes-256-gcm') {
      const seed = await unsealSeed(parsed as SealedKeyFile, await ask(), path)
      await chmod(path, 0o600)
      return { key: KeyPair.fromSeed(seed), created: false, migrated: false }
    }
    if (typeof parsed.seed === 'string') {
      const key = KeyPair.fromSeed(new Uint8Array(Buffer.from(parsed.seed, 'base64')))
      await writeAtomically(path, JSON.stringify(await sealSeed(key.seed, await ask('seal'))))
      return { key, created: false, migrated: true }
    }
    throw new KeyFileError(`key file ${path} is neither a sealed (version 2) nor a plain key file`)
  }
  const pass = await ask('seal')
  await mkdir(dataDir, { recursive: true, mode: 0o700 })
  const key = KeyPair.generate()
  const sealed = JSON.stringify(await sealSeed(key.seed, pass))
  try {
    await writeFile(path, sealed, { mode: 0o600, flag: 'wx' })
  } catch (err) {
    // Another process created it meanwhile: use that one.
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return loadOrCreateKey(dataDir, passphrase)
    throw err
  }
  await chmod(path, 0o600)
  return { key, created: true, migrated: false }
}

/**
 * Re-seals the node key of `dataDir` with a new passphrase (atomically, mode 0600): `current`
 * unseals it, `next` seals it. The key, hence the peer id, is unchanged.
 */
export async function changePassphrase(
  dataDir: string,
  current: PassphraseSource,
  next: PassphraseSource,
): Promise<KeyPair> {
  const path = join(dataDir, 'node.key')
  try {
    // It must exist: loadOrCreateKey would create a new identity.
    await readFile(path, 'utf8')
  } catch (err) {
    throw new KeyFileError(`cannot read key file ${path}: ${(err as Error).message} (dms init creates it)`)
  }
  const { key } = await loadOrCreateKey(dataDir, current)
  const pass = await next('seal')
  await writeAtomically(path, JSON.stringify(await sealSeed(key.seed, pass)))
  return key
}
