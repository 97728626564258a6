/**
 * scripts/node-env.sh: which node setup, demo and test run on. A `node` stub on the PATH runs the
 * real node reporting another version (Debian 12's 18.19.0, Debian 13's 20.19.2...); the LTS build
 * is a stub already in a temp cache folder, so nothing is fetched.
 */
import { strict as assert } from 'node:assert'
import { execFileSync } from 'node:child_process'
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

const SCRIPT = resolve('scripts/node-env.sh')
const LTS = '24.22.3'

describe('scripts/node-env.sh', () => {
  let dir: string
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'dms-node-env-'))
  })
  afterEach(() => rmSync(dir, { recursive: true, force: true }))

  /** The node first on the PATH after sourcing the script, on a machine whose node is `version`. */
  function nodeUsed(version: string): string {
    const bin = join(dir, 'bin')
    mkdirSync(bin, { recursive: true })
    const fake = `Object.defineProperty(process, 'versions', { value: { ...process.versions, node: '${version}' } });`
    writeFileSync(
      join(bin, 'node'),
      `#!/bin/sh\n[ "$1" = --version ] && echo v${version} && exit 0\n[ "$1" = -e ] && exec '${process.execPath}' -e "${fake}$2"\nexit 1\n`,
    )
    chmodSync(join(bin, 'node'), 0o755)
    writeFileSync(join(bin, 'npm'), '#!/bin/sh\nexit 1\n') // never asked: the build is cached
    chmodSync(join(bin, 'npm'), 0o755)
    const cached = join(dir, 'cache', LTS, 'bin')
    mkdirSync(cached, { recursive: true })
    writeFileSync(join(cached, 'node'), '#!/bin/sh\necho lts\n')
    chmodSync(join(cached, 'node'), 0o755)
    const out = execFileSync('/bin/bash', ['-c', `. '${SCRIPT}'; command -v node`], {
      env: {
        PATH: `${bin}:/usr/bin:/bin`,
        DMS_NODE_CACHE: join(dir, 'cache'),
        DMS_NODE_LTS: LTS,
      },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    return out.trim()
  }

  it("keeps Debian 13's node (20.19.2) and the LTS lines", () => {
    for (const v of ['20.19.2', '20.20.2', '22.0.0', '24.22.3', '26.1.0']) {
      assert.equal(nodeUsed(v), join(dir, 'bin', 'node'), v)
    }
  })

  it("uses the cached LTS build over Debian 12's node (18.19.0), 20 before 20.19 and odd lines", () => {
    for (const v of ['18.19.0', '20.10.0', '20.18.3', '21.7.3']) {
      assert.equal(nodeUsed(v), join(dir, 'cache', LTS, 'bin', 'node'), v)
    }
  })
})
