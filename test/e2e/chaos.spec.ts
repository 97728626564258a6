/**
 * The short chaos run (scripts/chaos.ts --short): a devnet of real processes (2 providers, the
 * Docker executor) takes 8 jobs while a provider, the requester and the contract-db are each
 * SIGKILLed and started again. Jobs may fail with a reason; none may be lost, and escrow must be
 * conserved at the contract-db.
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { runChaos, SHORT, table } from '../../scripts/chaos.js'

describe('chaos (short: SIGKILL a provider, the requester and the contract-db under a job stream)', function () {
  this.timeout(120_000)

  before(function () {
    assert.ok(existsSync('dist/dms/cli/main.js'), 'the CLI is not built: run `npm run build`')
    execFileSync('bash', ['scripts/build-test-image.sh'], { stdio: 'inherit' })
  })

  it('loses no job and conserves escrow; every killed process comes back', async function () {
    // A fixed seed: the same schedule on every run (the outcomes of jobs may still vary).
    const report = await runChaos({ ...SHORT, seed: 20261121 })
    const summary = table(report)
    // Each fault happened and its process came back.
    assert.deepEqual(report.faults.map((f) => f.kind).sort(), [
      'kill-provider',
      'restart-contract-db',
      'restart-requester',
    ])
    for (const f of report.faults) assert.equal(f.error, undefined, summary)
    assert.ok(
      report.faults.every((f) => (f.recoveredInMs ?? -1) >= 0),
      summary,
    )
    // Every job posted was taken and ended: completed, failed with a reason, or cancelled.
    assert.equal(report.jobs.posted, SHORT.jobs, summary)
    assert.equal(report.jobs.lost, 0, summary)
    assert.equal(report.jobs.withQueueTimeout, SHORT.jobs / 2, 'every other job may wait in queued')
    assert.equal(report.jobs.completed + report.jobs.failed + report.jobs.cancelled, SHORT.jobs, summary)
    for (const f of report.jobs.failures) assert.ok(f.code !== 'UNKNOWN' && f.message.length > 0, summary)
    assert.ok(report.jobs.completed > 0, `no job completed under chaos:\n${summary}`)
    // Escrow: what was credited is all in balances and escrow; no contract paid twice.
    assert.equal(report.escrow.balances + report.escrow.inEscrow, report.escrow.credited, summary)
    assert.equal(report.escrow.paidToProviders, report.escrow.providerBalances, summary)
    assert.deepEqual(report.escrow.settledTwice, [], summary)
    assert.deepEqual(report.escrow.badSplits, [], summary)
    assert.ok(report.escrow.conserved, summary)
    assert.ok(report.ok, summary)
  })
})
