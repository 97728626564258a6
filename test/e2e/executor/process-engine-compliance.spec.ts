/**
 * The process engine passes the engine-compliance suite (test/helpers/engine-compliance.ts): real
 * namespaces and cgroups, so it needs root, util-linux and the cgroup controllers.
 */
import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { engineCompliance } from '../../helpers/engine-compliance.js'

describe('process engine (real namespaces and cgroups)', function () {
  after(async () => {
    // The per-allocation cgroups are gone; their common parent is left empty.
    for (const c of ['cpu', 'cpuacct', 'memory', 'pids', '']) {
      await fs.rmdir(join('/sys/fs/cgroup', c, 'dms-test')).catch(() => {})
    }
  })
  engineCompliance('process', join(import.meta.dirname, 'process-engine.ts'))
})
