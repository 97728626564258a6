/**
 * GPUs measured through nvidia-smi (issue 31), with a STAND-IN nvidia-smi (a shell script in a
 * temp dir, no GPU here): its index is the one kept, its garbled or hostile output is bounded.
 */
import assert from 'node:assert/strict'
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { MachineMeter, measureMachine } from '../../../dms/resources/measure.js'
import { MAX_GPUS, parseNvidiaSmiGpus } from '../../../dms/resources/nvidia-smi-gpus.js'

const MiB = 1024 * 1024

describe('resources/nvidia-smi-gpus', () => {
  let dir: string

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'dms-smi-gpus-'))
  })
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  /** A stand-in nvidia-smi printing `out` (and noting its arguments); exits with `code`. */
  async function standIn(out: string, code = 0): Promise<string> {
    const p = path.join(dir, 'stand-in-nvidia-smi')
    await writeFile(p, `#!/bin/sh\necho "$@" > "${dir}/args"\ncat <<'OUT'\n${out}\nOUT\nexit ${code}\n`)
    await chmod(p, 0o755)
    return p
  }

  it('lists the GPUs nvidia-smi names, by its index, with model, memory and uuid', async () => {
    const smi = await standIn(
      '1, NVIDIA H200, 143771, GPU-1111aaaa-0000-0000-0000-000000000001\n' +
        '0, NVIDIA H100 80GB HBM3, 81559, GPU-0000aaaa-0000-0000-0000-000000000000',
    )
    const info = await measureMachine({ dataDir: dir, nvidiaSmi: smi })
    assert.deepEqual(info.gpus, [
      {
        index: 0,
        vendor: 'NVIDIA',
        model: 'NVIDIA H100 80GB HBM3',
        memoryBytes: 81559 * MiB,
        uuid: 'GPU-0000aaaa-0000-0000-0000-000000000000',
      },
      {
        index: 1,
        vendor: 'NVIDIA',
        model: 'NVIDIA H200',
        memoryBytes: 143771 * MiB,
        uuid: 'GPU-1111aaaa-0000-0000-0000-000000000001',
      },
    ])
    assert.equal(
      (await readFile(path.join(dir, 'args'), 'utf8')).trim(),
      '--query-gpu=index,name,memory.total,uuid --format=csv,noheader,nounits',
    )
  })

  it('passes the path through MachineMeter', async () => {
    const smi = await standIn('3, NVIDIA H200, 143771, GPU-x')
    const meter = new MachineMeter({}, { dataDir: dir, nvidiaSmi: smi })
    assert.deepEqual(
      (await meter.get()).gpus.map((g) => g.index),
      [3],
    )
  })

  it('falls back to systeminformation when nvidia-smi fails or is missing', async () => {
    const failing = await standIn('NVIDIA-SMI has failed because it could not communicate with the driver', 9)
    const a = await measureMachine({ dataDir: dir, nvidiaSmi: failing })
    const b = await measureMachine({ dataDir: dir, nvidiaSmi: path.join(dir, 'nowhere') })
    // No GPU on this machine: systeminformation finds none; the failing tool's text is no GPU.
    assert.deepEqual(a.gpus, [])
    assert.deepEqual(b.gpus, [])
  })

  it('skips garbled lines and keeps the good ones', () => {
    const gpus = parseNvidiaSmiGpus(
      [
        '0, NVIDIA H200, 143771, GPU-a',
        '1, NVIDIA H200, [N/A], GPU-b', // memory unknown
        'x, NVIDIA H200, 1, GPU-c', // not an index
        '1234, NVIDIA H200, 1, GPU-d', // index too long
        '2, , 1, GPU-e', // no name
        `3, ${'A'.repeat(129)}, 1, GPU-f`, // name too long
        '4, NVIDIA \u001b[31mH200, 1, GPU-g', // control characters
        '5, NVIDIA H200, 99999999999, GPU-h', // memory too large
        '0, Another, 1, GPU-dup', // a second index 0
        '6, NVIDIA H200', // too few fields
        '7, Tesla, Inc. X1, 2048, [N/A]', // a comma in the name, no uuid
        '',
      ].join('\n'),
    )
    assert.deepEqual(gpus, [
      { index: 0, vendor: 'NVIDIA', model: 'NVIDIA H200', memoryBytes: 143771 * MiB, uuid: 'GPU-a' },
      { index: 7, vendor: 'NVIDIA', model: 'Tesla, Inc. X1', memoryBytes: 2048 * MiB },
    ])
  })

  it('reads at most 64 GPUs however many lines come', () => {
    const text = Array.from({ length: 1000 }, (_, i) => `${i}, NVIDIA H200, 1024, GPU-${i}`).join('\n')
    const gpus = parseNvidiaSmiGpus(text)
    assert.equal(gpus.length, MAX_GPUS)
    assert.equal(gpus.at(-1)?.index, MAX_GPUS - 1)
  })

  it('bounds what it reads from a flooding nvidia-smi (64 KiB): no GPU rather than a hang', async () => {
    const p = path.join(dir, 'stand-in-flood')
    await writeFile(p, '#!/bin/sh\nyes "0, NVIDIA H200, 1, GPU-a"\n')
    await chmod(p, 0o755)
    const t0 = Date.now()
    const info = await measureMachine({ dataDir: dir, nvidiaSmi: p })
    assert.deepEqual(info.gpus, [], 'over the output bound: nvidia-smi is not believed')
    assert.ok(Date.now() - t0 < 5000)
  })
})
