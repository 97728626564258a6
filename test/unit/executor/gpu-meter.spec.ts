/**
 * GPU use metering (specs/executor.md, "GPUs") with a STAND-IN nvidia-smi (a shell script printing
 * scripted figures): no GPU on this machine.
 */
import assert from 'node:assert/strict'
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  GpuMeter,
  nvidiaSmiQuery,
  parseNvidiaSmi,
  type GpuSample,
} from '../../../dms/executor/common/gpu-meter.js'

const MiB = 1024 * 1024

describe('executor/common/gpu-meter', () => {
  it('parses the CSV figures and leaves out what is not one', () => {
    assert.deepEqual(
      parseNvidiaSmi('0, 37, 1024\n1, [N/A], 5\n2, 101, 1\nNo devices were found\n3,100,0\n'),
      [
        { index: 0, utilization: 37, memoryUsedBytes: 1024 * MiB },
        { index: 3, utilization: 100, memoryUsedBytes: 0 },
      ],
    )
  })

  it('adds up busy GPU-seconds (utilisation × time since the last sample) and the peak memory', async () => {
    const figures: GpuSample[][] = [
      [{ index: 1, utilization: 0, memoryUsedBytes: 10 * MiB }],
      [
        { index: 1, utilization: 50, memoryUsedBytes: 100 * MiB },
        { index: 2, utilization: 100, memoryUsedBytes: 999 * MiB }, // not this run's GPU
      ],
      [], // a failed sample changes nothing
      [{ index: 1, utilization: 100, memoryUsedBytes: 40 * MiB }],
    ]
    const meter = new GpuMeter(() => Promise.resolve(figures.shift() ?? []), [1])
    await meter.sample(0)
    await meter.sample(2000) // 50% of 2 s
    await meter.sample(3000)
    await meter.sample(4000) // 100% of the 2 s since the last good sample
    assert.deepEqual(meter.usage(), { gpuSeconds: 3, gpuPeakMemoryBytes: 100 * MiB })
  })

  it('asks a stand-in nvidia-smi for exactly the run’s GPUs, and survives one that fails', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dms-stand-in-smi-'))
    try {
      const smi = join(dir, 'nvidia-smi')
      writeFileSync(smi, `#!/bin/sh\necho "$@" > "${dir}/args"\nprintf '3, 80, 2048\\n1, 20, 512\\n'\n`)
      chmodSync(smi, 0o755)
      assert.deepEqual(await nvidiaSmiQuery(smi)([3, 1]), [
        { index: 3, utilization: 80, memoryUsedBytes: 2048 * MiB },
        { index: 1, utilization: 20, memoryUsedBytes: 512 * MiB },
      ])
      assert.equal(
        readFileSync(join(dir, 'args'), 'utf8').trim(),
        '--query-gpu=index,utilization.gpu,memory.used --format=csv,noheader,nounits -i 3,1',
      )
      writeFileSync(smi, '#!/bin/sh\necho "NVIDIA-SMI has failed" >&2\nexit 9\n')
      assert.deepEqual(await nvidiaSmiQuery(smi)([0]), [])
      assert.deepEqual(await nvidiaSmiQuery(join(dir, 'missing'))([0]), [])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
