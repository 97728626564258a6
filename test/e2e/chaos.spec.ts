/**
 * The short chaos run (scripts/chaos.ts --short): a devnet of real processes (2 providers, the
 * Docker executor) takes 8 jobs while a provider, the requester and the contract-db are each
 * SIGKILLed and started again, the contract-db is killed once more between a lock and its reply,
 * and a second requester is killed in a job state for good. Jobs may fail with a reason; none may
 * be lost, escrow must be conserved at the contract-db, and no contract may stay active.
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
      'contract-db-lock-kill',
      'kill-provider',
      'requester-gone',
      'restart-contract-db',
      'restart-requester',
    ])
    for (const f of report.faults) assert.equal(f.error, undefined, summary)
    const back = report.faults.filter((f) => f.kind !== 'requester-gone')
    assert.ok(
      back.every((f) => (f.recoveredInMs ?? -1) >= 0),
      summary,
    )
    // The contract-db died between a lock and its reply (its fault point), and came back.
    assert.equal(report.faults.find((f) => f.kind === 'contract-db-lock-kill')?.lockHit, true, summary)
    // The gone requester died at its fault point, and its contract ended without it.
    const gone = report.faults.find((f) => f.kind === 'requester-gone')?.gone
    assert.ok(gone?.killedIn === 'invoking' || gone?.killedIn === 'running', summary)
    assert.ok(
      gone.contracts?.every((c) => c.state !== 'active'),
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
    assert.deepEqual(report.escrow.openAfterDrain, [], `a contract left active:\n${summary}`)
    assert.ok(report.escrow.conserved, summary)
    assert.ok(report.ok, summary)
  })
})
