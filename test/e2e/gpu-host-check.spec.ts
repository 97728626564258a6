/**
 * Issue 31: the GPU host check (scripts/gpu-host-check.sh) run to the end in its STAND-IN mode
 * (fake device nodes, a stand-in nvidia-smi, /bin/sh instead of CUDA; no GPU here): the devnet,
 * the process-engine offer of a GPU, pinning, metering into the signed receipt and both declines.
 * The same script is what runs on a lent GPU host; this keeps it working between loans.
 */
import assert from 'node:assert/strict'
import { execFileSync, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'

const ROOT = join(import.meta.dirname, '..', '..')

describe('scripts/gpu-host-check.sh --stand-in', function () {
  this.timeout(120_000)

  it('passes every check, each line saying stand-in, and stops its devnet', async () => {
    assert.ok(existsSync(join(ROOT, 'dist', 'cli')), 'needs a built dist/ (npm run build)')
    const child = spawn('bash', [join(ROOT, 'scripts', 'gpu-host-check.sh'), '--stand-in'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    child.stdout.on('data', (d: Buffer) => (out += d.toString()))
    child.stderr.on('data', (d: Buffer) => (out += d.toString()))
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
    assert.equal(code, 0, out)
    const lines = out.trim().split('\n')
    for (const l of lines) assert.match(l, /stand-in/, `a line without "stand-in": ${l}`)
    for (const check of [
      'GPU measured',
      'job completed',
      'receipt GPU use',
      'two-gpus-declined',
      'other-model-declined',
    ])
      assert.ok(
        lines.some((l) => l.includes(`PASS ${check}:`)),
        `${check} not passed:\n${out}`,
      )
    assert.match(out, /gpuSeconds [1-9][0-9.]*, peak GPU memory 2048 MiB/)
    assert.match(out, /not enough gpus: need 2, offered 1/)
    // The model declined against is the one measured through the stand-in nvidia-smi.
    assert.match(out, /gpu model: need 1 GPU of model "A100"; offered here: 1 × NVIDIA H200 stand-in/)
    assert.match(out, /provider: gpus +#0 NVIDIA H200 stand-in 140\.4 GiB/)
    assert.match(out, /ALL CHECKS PASSED/)
    // Every process of the devnet exited on the SIGTERM (none left behind).
    const exits = /devnet stopped \("exits":(\{[^}]*\})\)/.exec(out)
    assert.ok(exits !== null, out)
    assert.deepEqual(JSON.parse(exits[1]), { 'provider-a': 0, requester: 0, 'contract-db': 0 })
    const left = execFileSync('ps', ['-eo', 'args']).toString().split('\n')
    assert.deepEqual(
      left.filter((a) => a.includes('dms-gpu-host-check.')),
      [],
    )
  })
})
