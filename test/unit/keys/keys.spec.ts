import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { KeyPair } from '../../../actors/identity.js'
import { envPassphrase, loadOrCreateKey } from '../../../dms/keys.js'
import { dmsEntry } from '../../helpers/dms-entry.js'

const pass = (p: string) => () => Promise.resolve(p)
const run = promisify(execFile)

describe('dms/keys (sealed node key)', function () {
  this.timeout(20_000)
  let dir: string
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dms-keys-'))
  })
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('creates a sealed key file (mode 0600, no seed in the clear) and reopens it with the passphrase', async () => {
    const first = await loadOrCreateKey(dir, pass('correct horse'))
    assert.equal(first.created, true)
    const path = join(dir, 'node.key')
    assert.equal((await stat(path)).mode & 0o777, 0o600)
    const text = await readFile(path, 'utf8')
    const file = JSON.parse(text) as Record<string, unknown>
    assert.equal(file.version, 2)
    assert.deepEqual(file.kdf && (file.kdf as { name: string }).name, 'scrypt')
    assert.ok(!text.includes(Buffer.from(first.key.seed).toString('base64')), 'seed stored in the clear')
    assert.ok(!text.includes(Buffer.from(first.key.seed).toString('hex')), 'seed stored in the clear')
    const again = await loadOrCreateKey(dir, pass('correct horse'))
    assert.equal(again.created, false)
    assert.deepEqual(again.key.publicKey, first.key.publicKey)
  })

  it('refuses a wrong passphrase and a tampered file with WrongPassphraseError', async () => {
    await loadOrCreateKey(dir, pass('right'))
    await assert.rejects(loadOrCreateKey(dir, pass('wrong')), { name: 'WrongPassphraseError' })
    const path = join(dir, 'node.key')
    const file = JSON.parse(await readFile(path, 'utf8')) as { ciphertext: string }
    const ct = Buffer.from(file.ciphertext, 'base64')
    ct[0] ^= 1
    await writeFile(path, JSON.stringify({ ...file, ciphertext: ct.toString('base64') }))
    await assert.rejects(loadOrCreateKey(dir, pass('right')), { name: 'WrongPassphraseError' })
  })

  it('without DMS_PASSPHRASE fails with a message saying how to set it, and creates nothing', async () => {
    await assert.rejects(loadOrCreateKey(dir, envPassphrase({})), (err: Error) => {
      assert.equal(err.name, 'PassphraseRequiredError')
      assert.match(err.message, /DMS_PASSPHRASE/)
      assert.match(err.message, /node\.key/)
      return true
    })
    await assert.rejects(stat(join(dir, 'node.key')), { code: 'ENOENT' })
    const ok = await loadOrCreateKey(dir, envPassphrase({ DMS_PASSPHRASE: 'from env' }))
    assert.equal(ok.created, true)
  })

  it('seals a plain key file of the previous format in place, keeping the identity', async () => {
    const key = KeyPair.generate()
    const path = join(dir, 'node.key')
    await writeFile(
      path,
      JSON.stringify({ type: 'ed25519', seed: Buffer.from(key.seed).toString('base64') }),
      {
        mode: 0o644,
      },
    )
    const loaded = await loadOrCreateKey(dir, pass('p'))
    assert.equal(loaded.migrated, true)
    assert.deepEqual(loaded.key.publicKey, key.publicKey)
    const text = await readFile(path, 'utf8')
    assert.ok(!text.includes(Buffer.from(key.seed).toString('base64')))
    assert.equal((await stat(path)).mode & 0o777, 0o600)
    const reopened = await loadOrCreateKey(dir, pass('p'))
    assert.equal(reopened.migrated, false)
    assert.deepEqual(reopened.key.publicKey, key.publicKey)
  })

  it('`dms init` without a passphrase or terminal exits 1 naming DMS_PASSPHRASE; with it, seals', async () => {
    const env = { ...process.env }
    delete env.DMS_PASSPHRASE
    const cli = [...dmsEntry(), 'init', '--data-dir', dir]
    await assert.rejects(run(process.execPath, cli, { env }), (err: { code: number; stderr: string }) => {
      assert.equal(err.code, 1)
      assert.match(err.stderr, /^dms: .*DMS_PASSPHRASE/m)
      assert.doesNotMatch(err.stderr, /\n\s+at /, 'a stack trace for a user mistake')
      return true
    })
    const { stdout } = await run(process.execPath, [...cli, '--json'], {
      env: { ...env, DMS_PASSPHRASE: 'secret' },
    })
    const out = JSON.parse(stdout) as { peerId: string; created: boolean }
    assert.equal(out.created, true)
    assert.match(out.peerId, /^12D3KooW/)
    const key = await loadOrCreateKey(dir, pass('secret'))
    assert.equal(key.created, false)
  })
})
