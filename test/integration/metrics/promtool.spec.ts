/**
 * Every role's metrics as Prometheus reads them: a requester, a provider and the contract-db, each
 * scraped on its own metrics listener with its read-only token after one job ran end to end (real
 * libp2p on 127.0.0.1, real Docker), each text checked by Prometheus's own `promtool check
 * metrics` (scripts/promtool-bootstrap.sh installs it; missing, the test skips, and fails under
 * CI=true). And the metrics token is no API token: with it a job can be neither posted nor read.
 */
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { parseJobSpec } from '../../../dms/orchestrator/job-spec.js'
import { jobReaches, startNetwork, TEST_IMAGE, type TestNetwork } from '../../helpers/network.js'

const MiB = 1024 * 1024

const hasPromtool = () => spawnSync('promtool', ['--version'], { stdio: 'ignore' }).status === 0

/** `promtool check metrics` on `text`: its exit status and what it printed. */
function promtool(text: string): Promise<{ status: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn('promtool', ['check', 'metrics'], { stdio: ['pipe', 'pipe', 'pipe'] })
    let out = ''
    p.stdout.on('data', (d: Buffer) => (out += d.toString()))
    p.stderr.on('data', (d: Buffer) => (out += d.toString()))
    p.once('error', reject)
    p.once('close', (status) => resolve({ status, out }))
    p.stdin.end(text)
  })
}

/** GET /metrics on a metrics listener with its token. */
async function scrape(listener: { address?: string; token?: string } | undefined): Promise<string> {
  assert.ok(listener?.address !== undefined && listener.token !== undefined, 'no metrics listener')
  const res = await fetch(`http://${listener.address}/metrics`, {
    headers: { authorization: `Bearer ${listener.token}` },
  })
  assert.equal(res.status, 200)
  assert.equal(res.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8')
  return res.text()
}

describe('metrics of every role, checked by promtool', function () {
  this.timeout(60_000)
  let net: TestNetwork | undefined

  before(async function () {
    if (!hasPromtool()) {
      if (process.env.CI === 'true') assert.fail('promtool is missing: run scripts/promtool-bootstrap.sh')
      this.skip()
    }
    net = await startNetwork([{ cpu: 1, memoryBytes: 512 * MiB, perCpuHour: 3600 }], {
      requester: { bidWindowMs: 500, enoughBids: 1 },
      nodes: { metrics: { port: 0 }, api: { tcp: { port: 0 } } },
      contractDb: { metrics: { port: 0 } },
    })
    const posted = await net.requester.orchestrator!.post(
      parseJobSpec({
        image: TEST_IMAGE,
        command: ['sh', '-c', 'echo metrics'],
        resources: { cpu: 0.25, memory: '64MiB' },
        maxDuration: 60,
        maxPrice: 1_000_000,
      }),
    )
    const job = await jobReaches(net.requester, posted.record.id)
    assert.equal(job.state, 'completed', JSON.stringify(job.record.error))
  })
  after(async () => net?.stop())

  it("the requester's, the provider's and the contract-db's metrics pass promtool check metrics", async () => {
    const { requester, providers, contractDb } = net!
    const texts = {
      requester: await scrape(requester.metricsListener),
      provider: await scrape(providers[0].metricsListener),
      contractDb: await scrape(contractDb.metricsListener),
    }
    // Each text holds what its role counted of the job, and the process's runtime metrics.
    assert.match(texts.requester, /^dms_jobs\{state="completed"\} 1$/m)
    assert.match(texts.provider, /^dms_allocations\{state="released"\} 1$/m)
    assert.match(texts.contractDb, /^dms_contract_db_contracts\{state="settled"\} 1$/m)
    assert.match(texts.contractDb, /^dms_contract_db_settlements_total\{outcome="settled"\} 1$/m)
    assert.match(texts.contractDb, /^dms_contract_db_escrow_locked_microtokens_total [1-9]\d*$/m)
    assert.match(texts.contractDb, /^dms_contract_db_conservation_ok 1$/m)
    assert.match(texts.contractDb, /^dms_contract_db_escrow_microtokens 0$/m)
    for (const [role, text] of Object.entries(texts)) {
      assert.match(text, /^process_resident_memory_bytes \d+/m, role)
      const { status, out } = await promtool(text)
      assert.equal(status, 0, `${role}: promtool check metrics says\n${out}`)
      assert.equal(out.trim(), '', role)
    }
  })

  it('the metrics token can read the metrics and nothing else: no job is posted or read with it', async () => {
    const { requester } = net!
    const listener = requester.metricsListener!
    const auth = { authorization: `Bearer ${listener.token}`, 'content-type': 'application/json' }
    const [job] = await requester.orchestrator!.list()
    const body = JSON.stringify({ image: TEST_IMAGE, command: ['sh', '-c', ':'], maxDuration: 60 })
    for (const base of [`http://${requester.apiTcpAddress}`, `http://${listener.address}`]) {
      const tries = [
        await fetch(`${base}/v1/jobs`, { method: 'POST', headers: auth, body }),
        await fetch(`${base}/v1/jobs/${job.record.id}`, { headers: auth }),
        await fetch(`${base}/v1/jobs`, { headers: auth }),
      ]
      // The API's listener knows no such token (401); the metrics listener no such route (404).
      for (const res of tries) assert.ok([401, 404].includes(res.status), `${base}: ${res.status}`)
      assert.ok(tries.every((r) => r.status === (base.includes(listener.address!) ? 404 : 401)))
    }
    assert.equal((await requester.orchestrator!.list()).length, 1, 'no job was posted')
    // The contract-db's listener is no operator socket either: no credit, no account read.
    const cdb = net!.contractDb.metricsListener!
    const credit = await fetch(`http://${cdb.address}/v1/contract-db/accounts/${requester.peerId}/credit`, {
      method: 'POST',
      headers: { authorization: `Bearer ${cdb.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ amount: 1 }),
    })
    assert.equal(credit.status, 404)
  })
})
