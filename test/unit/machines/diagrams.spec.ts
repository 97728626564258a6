import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { DIAGRAMS, withDiagrams } from '../../../dms/machines/diagrams.js'

describe('machines/diagrams: specs/state-machines.md shows the machines the code runs', () => {
  it('every generated block matches its machine definition', async () => {
    const spec = await readFile(join(import.meta.dirname, '../../../specs/state-machines.md'), 'utf8')
    assert.equal(spec, withDiagrams(spec), 'run: npx tsx scripts/machine-diagrams.ts --write')
  })

  it('the job diagram has the retry, cancel and final edges', () => {
    const job = DIAGRAMS.job()
    assert.match(job, /running --> bidding : awaitResult error \[retriesLeft\] \/ retry/)
    assert.match(job, /running --> cancelling : CANCEL/)
    assert.doesNotMatch(job, /settling --> cancelling/, 'too late to cancel once the result is in')
    assert.match(job, /cancelling --> cancelled : cancel done/)
  })

  it('the bid diagram has the deadlines, the run and the endings', () => {
    const bid = DIAGRAMS.bid()
    assert.match(bid, /reserved --> expired : bidExpiry done/)
    assert.match(bid, /contracted --> expired : invokeDeadline done/)
    assert.match(bid, /state active \{\n\s+\[\*\] --> provisioning\n\s+provisioning --> running : STARTED/)
    assert.match(bid, /active --> publishing : RAN/)
    assert.match(bid, /completed --> released : always \[settled\]/)
    assert.match(bid, /resume --> running : always \[resumeIs\(running\)\]/)
  })
})
