/**
 * Issue 31: GPUs pinned in the process engine, with STAND-IN device nodes (no GPU on this
 * machine): a folder of `nvidia0`..`nvidia3` made with `mknod` (char 1:5, the kernel's zero
 * device, so a read shows the node is a real, open-able device) plus `nvidiactl` and
 * `nvidia-uvm`, passed as the engine's `gpuDevDir`. A run sees exactly its pinned GPUs' nodes
 * and the shared ones in its /dev, CUDA's variables naming them, and nothing of the others.
 * This verifies the pinning, not GPU support: no CUDA program runs here.
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { promises as fs } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ExecutionSpec } from '../../../dms/executor/executor.js'
import { ProcessEngine } from '../../../dms/executor/process/process-engine.js'
import { silentLogger } from '../../../dms/log.js'
import { SINGLE_MEMBER } from '../../../dms/workload/workload.js'

const MiB = 1024 * 1024

describe('ProcessEngine: GPUs pinned by index (stand-in device nodes)', function () {
  this.timeout(30_000)
  let workDir: string
  let devDir: string
  let smi: string
  let engine: ProcessEngine

  before(() => {
    workDir = mkdtempSync(join(tmpdir(), 'dms-process-gpu-'))
    devDir = join(workDir, 'stand-in-dev')
    // A stand-in nvidia-smi: every GPU 60% busy with 1 GiB in use; it notes what it was asked.
    smi = join(workDir, 'stand-in-nvidia-smi')
    writeFileSync(
      smi,
      `#!/bin/sh\necho "$@" >> "${workDir}/smi-args"\nfor i in 0 1 2 3; do echo "$i, 60, 1024"; done\n`,
    )
    chmodSync(smi, 0o755)
    execFileSync('mkdir', [devDir])
    for (const n of ['nvidia0', 'nvidia1', 'nvidia2', 'nvidia3', 'nvidiactl', 'nvidia-uvm'])
      execFileSync('mknod', ['-m', '666', join(devDir, n), 'c', '1', '5'])
    engine = new ProcessEngine(
      { log: silentLogger },
      {
        workDir: join(workDir, 'work'),
        cgroupParent: 'dms-test-gpu',
        runtimes: ['/bin/sh'],
        gpuDevDir: devDir,
        nvidiaSmi: smi,
      },
    )
  })
  after(async () => {
    rmSync(workDir, { recursive: true, force: true })
    for (const c of ['cpu', 'cpuacct', 'memory', 'pids', '']) {
      await fs.rmdir(join('/sys/fs/cgroup', c, 'dms-test-gpu')).catch(() => {})
    }
  })

  const spec = (script: string, gpus: number, gpuIndices?: number[]): ExecutionSpec => {
    const allocationId = `gpu-${randomBytes(6).toString('hex')}`
    return {
      jobId: `job-${allocationId}`,
      allocationId,
      workload: {
        members: [
          {
            name: SINGLE_MEMBER,
            artifact: { kind: 'runtime', path: '/bin/sh' },
            command: ['/bin/sh', '-c', script],
            // The job tries to widen its GPUs: the engine's variables win.
            env: { CUDA_VISIBLE_DEVICES: '0,1,2,3' },
            network: 'none',
            resources: { cpu: 1, memoryBytes: 64 * MiB, ...(gpus > 0 ? { gpus: { count: gpus } } : {}) },
          },
        ],
      },
      timeoutSeconds: 20,
      ...(gpuIndices !== undefined ? { gpuIndices } : {}),
    }
  }

  const SHOW =
    'ls /dev | grep nvidia | tr "\\n" " "; echo; ' +
    'echo "$CUDA_VISIBLE_DEVICES $NVIDIA_VISIBLE_DEVICES $CUDA_DEVICE_ORDER"; ' +
    'for d in /dev/nvidia*; do head -c 2 "$d" | od -An -tx1 | tr -d " \\n"; echo " $d"; done'

  it('offers GPUs when its device folder holds nvidiaN nodes', async () => {
    assert.equal((await engine.capabilities()).gpus, true)
    const none = new ProcessEngine(
      { log: silentLogger },
      { workDir: join(workDir, 'w2'), runtimes: ['/bin/sh'], gpuDevDir: join(workDir, 'nothing') },
    )
    assert.equal((await none.capabilities()).gpus, false)
  })

  it('binds exactly the pinned GPUs (and ctl, uvm) into /dev, readable, with CUDA told which', async () => {
    const result = await engine.run(spec(SHOW, 2, [3, 1]))
    assert.equal(result.status, 'completed', `${result.reason}: ${result.stderr}`)
    const [nodes, env, ...reads] = result.stdout.trim().split('\n')
    assert.deepEqual(nodes.trim().split(' ').sort(), ['nvidia-uvm', 'nvidia1', 'nvidia3', 'nvidiactl'])
    assert.equal(env, '3,1 3,1 PCI_BUS_ID')
    // Each node opens and reads as the device it is (zeros), not an empty file.
    assert.deepEqual(reads.sort(), [
      '0000 /dev/nvidia-uvm',
      '0000 /dev/nvidia1',
      '0000 /dev/nvidia3',
      '0000 /dev/nvidiactl',
    ])
  })

  it('meters its GPUs’ use through nvidia-smi (a stand-in here) into the usage', async () => {
    const result = await engine.run(spec('sleep 2', 2, [3, 1]))
    assert.equal(result.status, 'completed', `${result.reason}: ${result.stderr}`)
    // Two GPUs at 60% for about 2 s, sampled every 500 ms: about 2.4 busy GPU-seconds.
    const { gpuSeconds, gpuPeakMemoryBytes } = result.usage
    assert.ok(
      gpuSeconds !== undefined && gpuSeconds > 1 && gpuSeconds <= 2 * 0.6 * result.usage.wallSeconds + 0.01,
      String(gpuSeconds),
    )
    assert.equal(gpuPeakMemoryBytes, 2 * 1024 * 1024 * 1024, 'its two GPUs, not the four the stand-in lists')
    const asked = readFileSync(join(workDir, 'smi-args'), 'utf8').trim().split('\n')
    assert.ok(asked.length >= 2)
    for (const a of asked) assert.match(a, / -i 3,1$/)
  })

  it('gives a job without GPUs no GPU node and only the CUDA variables it set itself', async () => {
    const result = await engine.run(spec(SHOW, 0))
    assert.equal(result.status, 'completed', `${result.reason}: ${result.stderr}`)
    const [nodes, env] = result.stdout.split('\n')
    assert.equal(nodes.trim(), '')
    assert.equal(env, '0,1,2,3  ', 'only what the job set itself; no GPU node to use it with')
  })

  it('refuses GPUs asked but not pinned, and a pinned GPU this host has not, before anything runs', async () => {
    await assert.rejects(engine.run(spec(SHOW, 1)), /gpuIndices must name the 1 GPU the workload asks/)
    await assert.rejects(engine.run(spec(SHOW, 1, [7])), /holds GPU 7, which this host has not/)
    assert.deepEqual(await engine.listRuns(), [])
  })
})
