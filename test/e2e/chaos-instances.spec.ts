/**
 * The chaos run with two contract-db instances (scripts/chaos.ts, SHORT_INSTANCES; specs/chaos.md,
 * "Several contract-db instances"): one key, one PostgreSQL database (a throwaway cluster), each
 * instance a process of its own, SIGKILLed in turn three times (the first twice) and restarted while a devnet of real
 * processes (2 providers, the Docker executor) takes 8 jobs. The parties know both instances'
 * addresses. No job may be lost, money must be conserved, no contract may stay active.
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { runChaos, SHORT_INSTANCES, table } from '../../scripts/chaos.js'
import { startPostgres, type TestPostgres } from '../helpers/postgres.js'
import { freshDatabase } from '../helpers/postgres-db.js'

describe('chaos (short: two contract-db instances on one PostgreSQL, SIGKILLed in turn under a job stream)', function () {
  this.timeout(180_000)
  let cluster: TestPostgres | undefined

  before(async function () {
    assert.ok(existsSync('dist/dms/cli/main.js'), 'the CLI is not built: run `npm run build`')
    cluster = await startPostgres()
    if (cluster === undefined) this.skip()
    execFileSync('bash', ['scripts/build-test-image.sh'], { stdio: 'inherit' })
  })
  after(async () => {
    await cluster?.stop()
  })

  it('loses no job, conserves money, leaves no contract active; every instance comes back', async () => {
    const { url } = await freshDatabase(cluster!)
    const report = await runChaos({
      ...SHORT_INSTANCES,
      seed: 20261128,
      contractDbStore: { backend: 'postgres', url },
    })
    const summary = table(report)
    // The figures, for specs/chaos.md.
    process.stdout.write(`${summary}\n`)
    assert.deepEqual(
      report.faults.map((f) => f.target),
      ['contract-db', 'contract-db-2', 'contract-db'],
      summary,
    )
    for (const f of report.faults) {
      assert.equal(f.error, undefined, summary)
      assert.ok((f.recoveredInMs ?? -1) >= 0, summary)
    }
    assert.equal(report.jobs.posted, SHORT_INSTANCES.jobs, summary)
    assert.equal(report.jobs.lost, 0, summary)
    assert.equal(
      report.jobs.completed + report.jobs.failed + report.jobs.cancelled,
      SHORT_INSTANCES.jobs,
      summary,
    )
    for (const f of report.jobs.failures) assert.ok(f.code !== 'UNKNOWN' && f.message.length > 0, summary)
    assert.ok(report.jobs.completed > 0, `no job completed under chaos:\n${summary}`)
    assert.equal(report.escrow.balances + report.escrow.inEscrow, report.escrow.credited, summary)
    assert.equal(report.escrow.paidToProviders, report.escrow.providerBalances, summary)
    assert.deepEqual(report.escrow.settledTwice, [], summary)
    assert.deepEqual(report.escrow.badSplits, [], summary)
    assert.deepEqual(report.escrow.openAfterDrain, [], `a contract left active:\n${summary}`)
    assert.ok(report.escrow.conserved, summary)
    assert.ok(report.ok, summary)
  })
})
