import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { promisify } from 'node:util'

const run = promisify(execFile)

// The README's demo command ends in `dms demo`: separate processes (contract-db, two providers,
// requester) running one Docker job to settlement. This guards it, through the built CLI.
describe('dms demo (separate processes, built CLI)', function () {
  // A job then a workflow on a devnet of five processes: slow on a loaded machine.
  this.timeout(180_000)

  it('runs a job to settlement on the cheaper provider and prints the journey, then a short workflow', async function () {
    assert.ok(
      existsSync('dist/dms/cli/main.js'),
      'the CLI is not built: run `npm run build` (scripts/setup.sh does)',
    )
    const { stdout } = await run(process.execPath, ['bin/dms.js', 'demo'], { timeout: 170_000 })
    assert.match(stdout, /winner: provider-b \(lowest score of 2 bids: total/)
    assert.match(
      stdout,
      /requester signature valid\n\s+provider signature {2}valid\n\s+contract-db proof {3}valid/,
    )
    assert.match(stdout, /stdout: hello from 65534 on /)
    assert.match(stdout, /output answer.txt: "42"/)
    assert.match(stdout, /verification: outputs hash valid, receipt signature valid/)
    const paid = /settlement: paid (\d+) to provider-b for ([\d.]+)s, refunded (\d+)/.exec(stdout)
    assert.ok(paid, 'no settlement line')
    assert.ok(Number(paid[1]) > 0 && Number(paid[2]) >= 1, 'billed for the second the job ran')
    assert.match(stdout, /contract-db {2}12D3KooW\w+ {2}\(dms contract-db run\) approved 3 peers/)
    assert.match(stdout, /contract-db settlement signature valid/)
    assert.match(stdout, /balance of requester: \d+ \(in escrow 0\)/)
    assert.match(stdout, /^CONTRACT +STATE +ESCROW +PAID +REFUNDED +REASON$/m)
    assert.match(stdout, /^[0-9a-f]{64} +settled +\d+ +\d+ +\d+ +-$/m)
    assert.match(stdout, /job [0-9a-f-]+: completed\n/)
    // Then a two-task workflow: the second task read what the first wrote.
    assert.match(stdout, /stdout of double: 21 doubled is 42/)
    assert.match(stdout, /workflow [0-9a-f-]+: completed \(escrow plan 200000, one contract per task\)/)
  })
})
