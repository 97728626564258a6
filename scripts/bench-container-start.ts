/**
 * What a container's start costs the provider, step by step, on the real engine (specs/benchmarks.md,
 * "Orchestration overhead: the CPU limit at the start"):
 *
 * 1. `container.start()` of the benchmark job (0.1 core, 16 MiB) created with the engine's usual
 *    limit (`NanoCpus`, a 100 ms period) against the executor's start limit (cpu-limit.ts: the same
 *    share over a longer period), interleaved; beside the wall time, the time the container's
 *    cgroup was throttled while it started (cpu.stat `throttled_time`, cgroup v1 or v2), which
 *    does not depend on the machine's load.
 * 2. The provider's preparation before the start, each step alone: the work folders, the image
 *    check, the disk quota (sparse file, mkfs.ext4, loop mount), the create and the attach.
 *
 *   node --import tsx scripts/bench-container-start.ts      # env: BENCH_N (default 10), DMS_TEST_IMAGE
 */
import { execFile as execFileCb } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { mkdir, readFile, truncate, writeFile } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import Docker from 'dockerode'
import { startCpuLimit } from '../dms/executor/docker/cpu-limit.js'
import { releaseQuota } from '../dms/executor/common/disk-quota.js'

const execFile = promisify(execFileCb)
const N = Number(process.env.BENCH_N ?? 10)
const IMAGE = process.env.DMS_TEST_IMAGE ?? 'dms-test:1'
const MiB = 1024 * 1024
const ROOT = process.getuid?.() === 0
const docker = new Docker()

const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN
const load = () => loadavg()[0].toFixed(1)

/** ms the container's cgroup was throttled so far (cgroupfs or systemd driver, v1 or v2). */
async function throttledMs(id: string): Promise<number> {
  const places = [
    `/sys/fs/cgroup/cpu/docker/${id}/cpu.stat`,
    `/sys/fs/cgroup/cpu,cpuacct/docker/${id}/cpu.stat`,
    `/sys/fs/cgroup/system.slice/docker-${id}.scope/cpu.stat`,
    `/sys/fs/cgroup/docker/${id}/cpu.stat`,
  ]
  for (const p of places) {
    const stat = await readFile(p, 'utf8').catch(() => undefined)
    if (stat === undefined) continue
    const v1 = /^throttled_time (\d+)$/m.exec(stat) // ns
    if (v1) return Number(v1[1]) / 1e6
    const v2 = /^throttled_usec (\d+)$/m.exec(stat)
    if (v2) return Number(v2[1]) / 1e3
  }
  return NaN
}

const host: Docker.HostConfig = {
  NetworkMode: 'none',
  Memory: 16 * MiB,
  MemorySwap: 16 * MiB,
  PidsLimit: 256,
}
const variants: Record<string, Docker.HostConfig> = {
  'NanoCpus 0.1 (100 ms period)': { ...host, NanoCpus: 1e8 },
  'start limit 0.1 (cpu-limit.ts)': { ...host, ...startCpuLimit(0.1) },
  'no CPU limit': host,
}

async function starts(): Promise<void> {
  const wall = new Map<string, number[]>(Object.keys(variants).map((k) => [k, []]))
  const throttled = new Map<string, number[]>(Object.keys(variants).map((k) => [k, []]))
  for (let i = 0; i < N; i++) {
    for (const [name, hostConfig] of Object.entries(variants)) {
      const c = await docker.createContainer({ Image: IMAGE, Cmd: ['sleep', '5'], HostConfig: hostConfig })
      const t0 = performance.now()
      await c.start()
      wall.get(name)!.push(performance.now() - t0)
      throttled.get(name)!.push(await throttledMs(c.id))
      await c.remove({ force: true })
    }
  }
  console.log(`\n1. container.start(), ${N} each, interleaved (load ${load()} at the end)\n`)
  console.log('limit'.padEnd(32), 'wall p50 ms'.padStart(12), 'throttled p50 ms'.padStart(17))
  for (const name of Object.keys(variants))
    console.log(
      name.padEnd(32),
      p50(wall.get(name)!).toFixed(0).padStart(12),
      p50(throttled.get(name)!).toFixed(1).padStart(17),
    )
}

async function preparation(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'dms-bench-start-'))
  const steps = [
    'work folders',
    'image check',
    'quota: sparse file',
    'quota: mkfs.ext4',
    'quota: mount',
    'create',
    'attach',
  ]
  const t = new Map<string, number[]>(steps.map((s) => [s, []]))
  const time = async <T>(step: string, fn: () => Promise<T>): Promise<T> => {
    const t0 = performance.now()
    const out = await fn()
    t.get(step)!.push(performance.now() - t0)
    return out
  }
  try {
    for (let i = 0; i < N; i++) {
      const dir = join(root, `a${i}`, 'outputs')
      const img = join(root, `a${i}`, 'disk.img')
      await time('work folders', () => mkdir(dir, { recursive: true }))
      await time('image check', () => docker.getImage(IMAGE).inspect())
      if (ROOT) {
        // The steps of disk-quota.ts's mountQuota, each timed (256 MiB: the default quota).
        await time('quota: sparse file', async () => {
          await writeFile(img, '', { flag: 'wx', mode: 0o600 })
          await truncate(img, 256 * MiB + 8 * MiB)
        })
        await time('quota: mkfs.ext4', () =>
          execFile('mkfs.ext4', ['-q', '-F', '-m', '0', '-O', '^has_journal', '-E', 'nodiscard', img]),
        )
        await time('quota: mount', () => execFile('mount', ['-o', 'loop,nosuid,nodev,noexec', img, dir]))
      }
      const c = await time('create', () =>
        docker.createContainer({
          Image: IMAGE,
          Cmd: ['true'],
          HostConfig: {
            ...variants['start limit 0.1 (cpu-limit.ts)'],
            Mounts: [{ Type: 'bind', Source: dir, Target: '/outputs' }],
          },
        }),
      )
      const s = await time('attach', () => c.attach({ stream: true, stdout: true, stderr: true }))
      ;(s as unknown as { destroy(): void }).destroy()
      await c.remove({ force: true })
      if (ROOT) await releaseQuota(dir, img)
    }
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
  console.log(`\n2. the provider's preparation, each step alone, ${N} runs (load ${load()} at the end)\n`)
  for (const step of steps)
    if (t.get(step)!.length > 0)
      console.log(step.padEnd(20), p50(t.get(step)!).toFixed(1).padStart(8), 'ms p50')
}

console.log(`bench-container-start: load ${load()}`)
await starts()
await preparation()
