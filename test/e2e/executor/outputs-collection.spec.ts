/**
 * Collecting a hostile job's /outputs with the real DockerExecutor: names that are not UTF-8, paths
 * longer than the host's PATH_MAX and symlinks are skipped and counted, never allowed to erase the
 * run; the files come back as a tar on disk, never as bytes in the result.
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DockerExecutor } from '../../../dms/executor/docker/docker-executor.js'
import type { ExecutionSpec } from '../../../dms/executor/executor.js'
import { containerSpec, type ContainerSpecInit } from '../../helpers/workload.js'
import { silentLogger } from '../../../dms/log.js'
import { removeTree } from '../../../dms/executor/common/remove-tree.js'
import { HOSTILE_OUTPUTS } from '../../fixtures/hostile-outputs.js'
import { untar } from '../../helpers/tar.js'

const IMAGE = process.env.DMS_TEST_IMAGE ?? 'dms-test:1'
const MiB = 1024 * 1024
const sha256 = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex')

describe('DockerExecutor output collection (real Docker)', function () {
  this.timeout(30_000)
  let workDir: string

  before(function () {
    execFileSync('bash', [join(import.meta.dirname, '../../../scripts/build-test-image.sh')], {
      stdio: 'inherit',
    })
    workDir = mkdtempSync(join(tmpdir(), 'dms-collect-e2e-'))
  })
  after(() => removeTree(workDir))

  const spec = (command: string[], overrides: Partial<ContainerSpecInit> = {}): ExecutionSpec => {
    const allocationId = `e2e-${randomBytes(6).toString('hex')}`
    return containerSpec({
      jobId: `job-${allocationId}`,
      allocationId,
      image: IMAGE,
      command,
      cpu: 1,
      memoryBytes: 64 * MiB,
      timeoutSeconds: 20,
      ...overrides,
    })
  }

  it('skips names it cannot read or name, and keeps the run: status, exit code, usage, logs', async function () {
    const ex = new DockerExecutor({ log: silentLogger }, { workDir })
    const s = spec(['sh', '-c', HOSTILE_OUTPUTS])
    const result = await ex.run(s)

    assert.equal(result.status, 'completed', result.reason)
    assert.equal(result.exitCode, 0)
    assert.equal(result.stdout, 'ran\n')
    assert.ok(result.usage.wallSeconds > 0, 'the time used is reported')
    assert.deepEqual(
      result.outputs.map((o) => [o.path, o.sha256]),
      [['good.txt', sha256('good\n')]],
    )
    const skipped = result.outputsSkipped
    assert.equal(skipped?.count, 3, skipped?.detail)
    assert.match(skipped.detail, /1 entry with a name that is not UTF-8 \("bad\\xffname"\)/)
    assert.match(skipped.detail, /1 entry with a path too long to open \("0{48}…" \(\d{4} bytes\)\)/)
    assert.match(skipped.detail, /1 entry not a regular file or folder \("link"\)/)
    assert.ok(result.archive !== undefined)
    assert.deepEqual(
      (await untar(result.archive.file)).map((f) => [f.path, f.content.toString()]),
      [['good.txt', 'good\n']],
    )
    rmSync(result.archive.file)
    assert.equal(
      existsSync(join(workDir, s.allocationId)),
      false,
      'the deep tree was removed with the work folder',
    )
  })

  it('returns the outputs as a tar file on disk, hashed as written, and no bytes in the result', async function () {
    const ex = new DockerExecutor({ log: silentLogger }, { workDir, maxOutputBytes: 64 * MiB })
    const result = await ex.run(
      spec(['sh', '-c', 'head -c 20971520 /dev/urandom > /outputs/big; echo small > /outputs/small']),
    )
    assert.equal(result.status, 'completed', result.reason)
    // The whole result, as the allocation holds it, is a few hundred bytes whatever the outputs weigh.
    assert.ok(JSON.stringify(result).length < 4096, `result of ${JSON.stringify(result).length} characters`)
    const archive = result.archive!
    assert.ok(statSync(archive.file).isFile())
    assert.ok(archive.size > 20 * MiB)
    assert.equal(statSync(archive.file).size, archive.size)
    assert.equal(archive.sha256, sha256(readFileSync(archive.file)))
    const files = await untar(archive.file)
    assert.deepEqual(
      result.outputs.map((o) => [o.path, o.size, o.sha256]),
      files.map((f) => [f.path, f.content.length, sha256(f.content)]),
    )
    rmSync(archive.file)
  })

  it('refuses outputs over the limits as a whole, keeping the exit code', async function () {
    const ex = new DockerExecutor({ log: silentLogger }, { workDir, maxOutputFiles: 3 })
    const result = await ex.run(
      spec(['sh', '-c', 'for i in 1 2 3 4; do echo $i > /outputs/$i; done; exit 3']),
    )
    assert.equal(result.status, 'failed')
    assert.equal(result.exitCode, 3)
    assert.equal(result.reason, 'exit code 3; outputs exceed 3 files')
    assert.deepEqual(result.outputs, [])
    assert.equal(result.archive, undefined)
  })
})
