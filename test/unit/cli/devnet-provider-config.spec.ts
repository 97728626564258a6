/**
 * `dms devnet --provider-config FILE` (issue 31: a GPU host's devnet offers its GPU on the process
 * engine): the file is read, merged and checked as the provider checks its config, and a bad one
 * is refused naming the file and the field before any process starts.
 */
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { mergeSection, readProviderConfig } from '../../../dms/cli/devnet-provider-config.js'
import { startDevnet } from '../../../dms/cli/devnet.js'

describe('cli/devnet --provider-config', function () {
  this.timeout(20_000)
  let dir: string
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'dms-devnet-pc-'))
  })
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  const file = async (text: string) => {
    const f = path.join(dir, 'provider.json')
    await writeFile(f, text)
    return f
  }

  it('merges objects key by key and replaces arrays and values', () => {
    const merged = mergeSection(
      { offer: { cpu: 1, gpus: 0, prices: { perCpuHour: 5, perGpuHour: 0 } }, engines: ['docker'] },
      { offer: { gpus: 1, prices: { perGpuHour: 7 } }, engines: ['process'] },
    )
    assert.deepEqual(merged, {
      offer: { cpu: 1, gpus: 1, prices: { perCpuHour: 5, perGpuHour: 7 } },
      engines: ['process'],
    })
  })

  it('refuses a __proto__ key instead of setting a prototype', async () => {
    const { section } = await readProviderConfig(await file('{"offer":{"__proto__":{"polluted":1}}}'))
    assert.throws(() => mergeSection({ offer: {} }, section), /field "__proto__" is not allowed/)
    assert.equal(({} as Record<string, unknown>).polluted, undefined)
  })

  it('names the file for a missing file, bad JSON and a non-object', async () => {
    await assert.rejects(
      readProviderConfig(path.join(dir, 'nope.json')),
      /--provider-config .*nope\.json: cannot read it/,
    )
    const bad = await file('{"engines": [')
    await assert.rejects(readProviderConfig(bad), /--provider-config .*provider\.json: not JSON/)
    await file('[1,2]')
    await assert.rejects(readProviderConfig(bad), /must be a JSON object/)
    await assert.rejects(readProviderConfig('/dev/zero'), /not a file of at most 1 MiB/)
  })

  it('refuses a field the config schema refuses before any process starts', async () => {
    const root = path.join(dir, 'net')
    const f = await file('{"engines":["process"],"process":{"nvidiaSmi":"relative/nvidia-smi"}}')
    await assert.rejects(
      startDevnet({ providers: 1, dir: root, providerConfig: await readProviderConfig(f) }),
      (err: Error) => {
        assert.equal(err.name, 'CliError')
        assert.match(err.message, /--provider-config .*provider\.json: "provider\.process\.nvidiaSmi"/)
        return true
      },
    )
    // Nothing was launched: no process wrote its log or ready line.
    const left = existsSync(root) ? await readdir(root, { recursive: true }) : []
    assert.deepEqual(
      left.filter((n) => String(n).endsWith('.log')),
      [],
    )
    const typo = await file('{"offr":{"gpus":1}}')
    await assert.rejects(
      startDevnet({ providers: 1, dir: root, providerConfig: await readProviderConfig(typo) }),
      /"provider\.offr": unknown field/,
    )
  })
})
