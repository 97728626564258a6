/**
 * A stand-in for a container run that writes real outputs: each run completes with the files it
 * is given, archived through the real tar writer (test/helpers/tar.ts) into `dir`, with their
 * manifest and the outputs hash a provider signs. `lies`: the manifest (and so the receipt) names
 * other bytes than the archive holds, as a provider of a wrong run would. Named as such: the
 * tests that use it are about what happens to outputs, not about the engine.
 */
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import type { ExecutionResult } from '../../dms/executor/executor.js'
import { hashOutputs } from '../../dms/workload/outputs.js'
import { tarOf } from './tar.js'
import { TestExecutor } from './test-executor.js'

export class ArchiveExecutor extends TestExecutor {
  lies = false
  constructor(
    private readonly dir: string,
    private readonly files: () => Array<{ path: string; content: Buffer }>,
    private readonly wallSeconds = 1,
  ) {
    super('archive') // a test engine: outputs archived for real, no container
  }
  async run(): Promise<ExecutionResult> {
    const files = this.files()
    const tar = await tarOf(join(this.dir, `${randomBytes(6).toString('hex')}.tar`), files)
    const sorted = [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
    const outputs = sorted.map((f, i) => ({
      path: f.path,
      sha256: this.lies ? 'ee'.repeat(32) : tar.hashes[i],
      size: f.content.length,
    }))
    return {
      status: 'completed',
      exitCode: 0,
      stdout: '',
      stderr: '',
      truncated: false,
      outputs,
      archive: { file: tar.file, sha256: tar.sha256, size: tar.size },
      outputsHash: hashOutputs(outputs),
      usage: { wallSeconds: this.wallSeconds, cpuSeconds: 0, peakMemoryBytes: 0 },
    }
  }
}
