/** Probe: how the job's CPU limit changes `container.start()` (variants interleaved). */
import Docker from 'dockerode'

const docker = new Docker({ socketPath: '/var/run/docker.sock' })
const IMAGE = 'dms-test:1'
const N = Number(process.env.N ?? 10)

type Variant = { name: string; host: Docker.HostConfig; after?: (c: Docker.Container) => Promise<unknown> }
const base: Docker.HostConfig = { NetworkMode: 'none', Memory: 16 * 1024 * 1024, MemorySwap: 16 * 1024 * 1024, PidsLimit: 256 }
const variants: Variant[] = [
  { name: 'nano 0.1', host: { ...base, NanoCpus: 1e8 } },
  { name: 'none', host: { ...base } },
  { name: 'none + update nano', host: { ...base }, after: (c) => c.update({ NanoCpus: 1e8 }) },
  { name: '500ms then 100ms', host: { ...base, CpuPeriod: 500_000, CpuQuota: 50_000 }, after: (c) => c.update({ CpuPeriod: 100_000, CpuQuota: 10_000 }) },
  { name: 'period 1s quota 100ms', host: { ...base, CpuPeriod: 1_000_000, CpuQuota: 100_000 } },
  { name: 'period 500ms quota 50ms', host: { ...base, CpuPeriod: 500_000, CpuQuota: 50_000 } },
]
const times = new Map<string, number[]>(variants.map((v) => [v.name, []]))
const thr = new Map<string, number[]>(variants.map((v) => [v.name, []]))
for (let i = 0; i < N; i++) {
  for (const v of variants) {
    const c = await docker.createContainer({ Image: IMAGE, Cmd: ['sleep', '5'], HostConfig: v.host })
    const t0 = performance.now()
    await c.start()
    if (v.after) await v.after(c)
    times.get(v.name)!.push(performance.now() - t0)
    const stat = await import('node:fs/promises').then((fs) => fs.readFile(`/sys/fs/cgroup/cpu/docker/${c.id}/cpu.stat`, 'utf8')).catch(() => '')
    const m = /throttled_time (\d+)/.exec(stat)
    thr.get(v.name)!.push(m ? Number(m[1]) / 1e6 : NaN)
    if (i === 0 && v.after) { const h = (await c.inspect()).HostConfig; console.log(v.name, h.NanoCpus, h.CpuPeriod, h.CpuQuota) }
    await c.remove({ force: true })
  }
}
const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
for (const [k, xs] of times) console.log(k.padEnd(26), p50(xs).toFixed(0), xs.map((x) => x.toFixed(0)).join(' '))
for (const [k, xs] of thr) console.log('throttled ms', k.padEnd(26), p50(xs).toFixed(0), xs.map((x) => x.toFixed(0)).join(' '))
