/**
 * scripts/link-dms.sh: the `dms` command setup puts on the PATH. Where setup runs on the LTS build
 * (DMS_NODE_BIN: this machine's node is too old, as Debian 12's 18), the command must run on that
 * build, not on `/usr/bin/env node`. npm's global prefix is a temp folder; `node` is a stub that
 * prints what it was given.
 */
import { strict as assert } from 'node:assert'
import { execFileSync, spawnSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

const SCRIPT = resolve('scripts/link-dms.sh')

describe('scripts/link-dms.sh', () => {
  let dir: string
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'dms-link-'))
  })
  afterEach(() => rmSync(dir, { recursive: true, force: true }))

  function lts(name: string): string {
    const bin = join(dir, name)
    mkdirSync(bin, { recursive: true })
    writeFileSync(join(bin, 'node'), '#!/bin/sh\necho lts; for a in "$@"; do echo "[$a]"; done\n')
    chmodSync(join(bin, 'node'), 0o755)
    return bin
  }
  // Without npm's own npm_config_* (npx sets them), which would win over the temp prefix.
  const env = (nodeBin: string) => ({
    ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.toLowerCase().startsWith('npm_'))),
    NPM_CONFIG_PREFIX: join(dir, 'prefix'),
    DMS_NODE_BIN: nodeBin,
  })

  it('on the LTS build: dms runs bin/dms.js of this checkout on that node, arguments intact', () => {
    const out = execFileSync('bash', [SCRIPT], { env: env(lts('lts-bin')), encoding: 'utf8', stdio: 'pipe' })
    assert.equal(out, '')
    const dms = join(dir, 'prefix', 'bin', 'dms')
    const ran = execFileSync(dms, ['job', 'run', 'a b', '$HOME'], { encoding: 'utf8' })
    assert.equal(ran, `lts\n[${resolve('bin/dms.js')}]\n[job]\n[run]\n[a b]\n[$HOME]\n`)
    assert.ok(readFileSync(dms, 'utf8').includes(`"${resolve('bin/dms.js')}"`), 'setup knows it as its own')
  })

  it('refuses a node path a shell would read as code, writing nothing', () => {
    const r = spawnSync('bash', [SCRIPT], { env: env(lts('x$(touch pwned)')), encoding: 'utf8' })
    assert.equal(r.status, 1)
    assert.match(r.stderr, /holds a quote/)
    assert.equal(existsSync(join(dir, 'prefix', 'bin', 'dms')), false)
  })
})
