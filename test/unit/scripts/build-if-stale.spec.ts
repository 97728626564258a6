/**
 * scripts/build-if-stale.sh: setup builds only when something the build reads changed. Run in a
 * copy of the repository's shape with `npm` stubbed on PATH (it records each build).
 */
import { strict as assert } from 'node:assert'
import { execFileSync } from 'node:child_process'
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

const SCRIPT = resolve('scripts/build-if-stale.sh')

describe('scripts/build-if-stale.sh', () => {
  let root: string
  const builds = (): number =>
    existsSync(join(root, 'builds')) ? readFileSync(join(root, 'builds'), 'utf8').length : 0
  const run = (env: Record<string, string> = {}): void => {
    execFileSync('/bin/bash', [join(root, 'scripts', 'build-if-stale.sh')], {
      env: { ...process.env, PATH: `${join(root, 'stub')}:${process.env.PATH ?? ''}`, ...env },
      stdio: 'ignore',
    })
  }

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'dms-build-if-stale-'))
    const hourAgo = new Date(Date.now() - 3_600_000)
    for (const d of ['scripts', 'actors', 'dms/cli', 'proto', 'dashboard', 'stub']) {
      mkdirSync(join(root, d), { recursive: true })
    }
    copyFileSync(SCRIPT, join(root, 'scripts', 'build-if-stale.sh'))
    for (const f of ['dms/node.ts', 'dms/cli/main.ts', 'package.json', 'tsconfig.json']) {
      writeFileSync(join(root, f), '')
      utimesSync(join(root, f), hourAgo, hourAgo)
    }
    for (const d of ['actors', 'dms', 'dms/cli', 'proto', 'dashboard'])
      utimesSync(join(root, d), hourAgo, hourAgo)
    writeFileSync(join(root, 'stub', 'npm'), `#!/bin/sh\nmkdir -p dist && printf x >> builds\n`)
    chmodSync(join(root, 'stub', 'npm'), 0o755)
  })
  afterEach(() => rmSync(root, { recursive: true, force: true }))

  it('builds once, then skips while nothing changed', () => {
    run()
    run()
    assert.equal(builds(), 1)
  })

  it('builds again after a source changes', () => {
    run()
    const later = new Date(Date.now() + 2000)
    utimesSync(join(root, 'dms/cli/main.ts'), later, later)
    run()
    assert.equal(builds(), 2)
  })

  it('builds again after a source is deleted (its folder changes)', () => {
    run()
    rmSync(join(root, 'dms/cli/main.ts'))
    const later = new Date(Date.now() + 2000)
    utimesSync(join(root, 'dms/cli'), later, later)
    run()
    assert.equal(builds(), 2)
  })

  it('builds when dist/ has no stamp (a clean, or a build that failed) and when DMS_REBUILD=1', () => {
    run()
    rmSync(join(root, 'dist'), { recursive: true })
    run()
    run({ DMS_REBUILD: '1' })
    assert.equal(builds(), 3)
  })
})
