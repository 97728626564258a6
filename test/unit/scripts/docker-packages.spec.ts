/**
 * scripts/docker-packages.sh: which Debian packages the Docker bootstrap installs. The commands it
 * reads (`apt-cache`, `dpkg`, `docker`, `dockerd`) are stubs on a PATH of their own, answering as
 * Debian 12 (bookworm, where docker.io holds the `docker` command) and Debian 13 (trixie, where it
 * is in docker-cli, which docker.io only recommends) answer.
 */
import { strict as assert } from 'node:assert'
import { execFileSync } from 'node:child_process'
import { chmodSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

const SCRIPT = resolve('scripts/docker-packages.sh')

// `apt-cache policy docker-cli` as each release prints it (trixie's copied from a Debian 13 system).
const POLICY = {
  bookworm: '',
  trixie: [
    'docker-cli:',
    '  Installed: (none)',
    '  Candidate: 26.1.5+dfsg1-9+b9',
    '  Version table:',
    '     26.1.5+dfsg1-9+b9 500',
    '        500 http://deb.debian.org/debian trixie/main amd64 Packages',
    '',
  ].join('\n'),
  known: 'docker-cli:\n  Installed: (none)\n  Candidate: (none)\n  Version table:\n',
}

interface Machine {
  policy: keyof typeof POLICY
  installed: Array<'docker' | 'dockerd' | 'busybox-static'>
}

describe('scripts/docker-packages.sh', () => {
  let dir: string
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'dms-docker-packages-'))
  })
  afterEach(() => rmSync(dir, { recursive: true, force: true }))

  function packages(m: Machine): string[] {
    const bin = join(dir, 'bin')
    rmSync(bin, { recursive: true, force: true })
    execFileSync('mkdir', ['-p', bin])
    for (const tool of ['awk', 'cat'])
      symlinkSync(
        execFileSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).trim(),
        join(bin, tool),
      )
    const stub = (name: string, body: string): void => {
      writeFileSync(join(bin, name), `#!/bin/sh\n${body}\n`)
      chmodSync(join(bin, name), 0o755)
    }
    writeFileSync(join(dir, 'policy'), POLICY[m.policy])
    stub('apt-cache', `[ "$1 $2" = "policy docker-cli" ] && cat '${join(dir, 'policy')}'; exit 0`)
    stub('dpkg', m.installed.includes('busybox-static') ? 'exit 0' : 'exit 1')
    if (m.installed.includes('docker')) stub('docker', 'exit 0')
    if (m.installed.includes('dockerd')) stub('dockerd', 'exit 0')
    const out = execFileSync('/bin/bash', [SCRIPT], { env: { PATH: bin }, encoding: 'utf8' })
    return out.split('\n').filter((l) => l !== '')
  }

  it('Debian 12, fresh: docker.io (which holds the docker command) and busybox-static', () => {
    assert.deepEqual(packages({ policy: 'bookworm', installed: [] }), ['docker.io', 'busybox-static'])
  })

  it('Debian 13, fresh: docker.io, docker-cli (only recommended by docker.io) and busybox-static', () => {
    assert.deepEqual(packages({ policy: 'trixie', installed: [] }), [
      'docker.io',
      'docker-cli',
      'busybox-static',
    ])
  })

  it('Debian 13 with the daemon but no command (docker.io installed without recommends): docker-cli', () => {
    assert.deepEqual(packages({ policy: 'trixie', installed: ['dockerd', 'busybox-static'] }), ['docker-cli'])
  })

  it('Debian 12 with the daemon but no command: docker.io again (there is no docker-cli)', () => {
    assert.deepEqual(packages({ policy: 'bookworm', installed: ['dockerd', 'busybox-static'] }), [
      'docker.io',
    ])
  })

  it('a docker-cli the archive knows but cannot install counts as absent', () => {
    assert.deepEqual(packages({ policy: 'known', installed: ['dockerd', 'busybox-static'] }), ['docker.io'])
  })

  it('everything present: nothing', () => {
    for (const policy of ['bookworm', 'trixie'] as const) {
      assert.deepEqual(packages({ policy, installed: ['docker', 'dockerd', 'busybox-static'] }), [])
    }
  })
})
