/** Section 4: the RSS of an idle provider node, its own `dms run` process. */
import { spawn } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { MiB, results, ROOT, table } from './common.js'

/** RSS of an idle provider node in its own process, 5 s after it is ready. */
async function idleRss(): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'dms-bench-rss-'))
  const cfg = join(dir, 'node.json')
  await writeFile(
    cfg,
    JSON.stringify({
      dataDir: join(dir, 'node'),
      oneHost: true,
      provider: {
        // No contract-db runs here: an idle provider never needs one.
        contractDb: '12D3KooWDpJ7As7BWAwRMfu1VU2WCqNjvq387JEYKDBj4kx6nXTN',
        offer: {
          cpu: 1,
          memoryBytes: 512 * MiB,
          diskBytes: 1024 * MiB,
          gpus: 0,
          prices: { perCpuHour: 1, perGiBMemoryHour: 1, perGiBDiskHour: 1, perGpuHour: 1, minJobPrice: 1 },
        },
      },
    }),
  )
  const child = spawn(process.execPath, [join(ROOT, 'bin/dms.js'), 'run', '--config', cfg], {
    stdio: ['ignore', 'pipe', 'ignore'],
    env: { ...process.env, DMS_PASSPHRASE: 'bench', DMS_LOG_LEVEL: 'warn' },
  })
  const exited = new Promise((r) => child.once('exit', r))
  try {
    await new Promise<void>((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`dms run exited (${code})`)))
      createInterface({ input: child.stdout }).on('line', (l) => l.includes('"ready"') && resolve())
    })
    await new Promise((r) => setTimeout(r, 5000)) // idle on purpose: this is what is measured
    const status = await readFile(`/proc/${child.pid}/status`, 'utf8')
    return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? NaN) / 1024
  } finally {
    child.kill('SIGTERM')
    await exited
    await rm(dir, { recursive: true, force: true })
  }
}

export async function memorySection(): Promise<void> {
  const rss = await idleRss()
  table('4. memory', ['measure', 'MB'], [['idle provider node RSS (target <= 80)', rss.toFixed(1)]])
  results.idleRssMB = rss
}
