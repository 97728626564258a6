/** The Docker engine passes the engine-compliance suite (test/helpers/engine-compliance.ts). */
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'
import { engineCompliance } from '../../helpers/engine-compliance.js'

describe('Docker engine (real Docker, image dms-test:1)', function () {
  before(function () {
    this.timeout(120_000)
    execFileSync('bash', [join(import.meta.dirname, '../../../scripts/build-test-image.sh')], {
      stdio: 'inherit',
    })
  })
  engineCompliance('docker', join(import.meta.dirname, 'docker-engine.ts'))
})
