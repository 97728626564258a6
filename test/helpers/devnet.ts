/**
 * What the browser tests share: Debian's chromium (scripts/chromium-bootstrap.sh) and a devnet of
 * separate processes (`dms devnet --json`), stopped by the cleanup function it returns.
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'

/** Debian's chromium (scripts/chromium-bootstrap.sh installs it), or DMS_CHROMIUM. */
export function chromiumPath(): string {
  const found = [process.env.DMS_CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find(
    (p) => p !== undefined && p !== '' && existsSync(p),
  )
  assert.ok(found, 'no chromium: run scripts/setup.sh (apt-get install chromium) or set DMS_CHROMIUM')
  return found
}

/** The devnet's ready line: every socket, listener and peer id. */
export interface DevnetReady {
  event: 'devnet-ready'
  contractDb: { socket: string; tcp: string; dataDir: string }
  requester: { peerId: string; socket: string; tcp: string }
  providers: Array<{ peerId: string; socket: string; tcp: string }>
}

/**
 * `dms devnet --providers <n>` (built CLI) in a temp folder, with more `args` (e.g.
 * `--price-per-result 700`), once ready; `stop` ends it and removes the folder.
 */
export async function startDevnet(
  providers: number,
  args: string[] = [],
): Promise<{ ready: DevnetReady; stop: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'dms-e2e-devnet-'))
  const devnet = spawn(
    process.execPath,
    ['bin/dms.js', 'devnet', '--providers', String(providers), '--json', '--dir', dir, ...args],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  )
  const exited = new Promise((r) => devnet.once('exit', r))
  const stop = async () => {
    if (devnet.exitCode === null && devnet.signalCode === null) devnet.kill('SIGINT')
    await exited
    await rm(dir, { recursive: true, force: true })
  }
  const out = createInterface({ input: devnet.stdout })
  try {
    const ready = await new Promise<DevnetReady>((resolve, reject) => {
      devnet.once('exit', (code) => reject(new Error(`dms devnet exited (code ${code}) before it was ready`)))
      out.on('line', (l) => {
        const v = JSON.parse(l) as { event?: string }
        if (v.event === 'devnet-ready') resolve(v as DevnetReady)
      })
    })
    return { ready, stop }
  } catch (err) {
    await stop()
    throw err
  }
}
