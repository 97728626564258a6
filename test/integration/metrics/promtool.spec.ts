/**
 * Every role's metrics as Prometheus reads them: a requester, a provider and the contract-db, each
 * scraped on its own metrics listener with its read-only token after one job ran end to end (real
 * libp2p on 127.0.0.1, real Docker), each text checked by Prometheus's own `promtool check
 * metrics` (scripts/promtool-bootstrap.sh installs it; missing, the test skips, and fails under
 * CI=true). And the metrics token is no API token: with it a job can be neither posted nor read.
 */
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
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

/** The `prometheus.yml` snippet specs/rest-api.md documents. */
async function documentedScrapeConfig(): Promise<string> {
  const spec = await readFile(join(import.meta.dirname, '../../../specs/rest-api.md'), 'utf8')
  const yaml = /```yaml\n(scrape_configs:[\s\S]*?)```/.exec(spec)?.[1]
  assert.ok(yaml !== undefined, 'specs/rest-api.md has no scrape config')
  return yaml
}

/** A free TCP port on 127.0.0.1 (Prometheus takes no port 0 it would tell). */
const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number }
      s.close(() => resolve(port))
    })
  })

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
    assert.match(texts.contractDb, /^dms_contract_db_info\{backend="level",cdb_instance="[^"]+:\d+"\} 1$/m)
    for (const [role, text] of Object.entries(texts)) {
      assert.match(text, /^process_resident_memory_bytes \d+/m, role)
      const { status, out } = await promtool(text)
      assert.equal(status, 0, `${role}: promtool check metrics says\n${out}`)
      assert.equal(out.trim(), '', role)
    }
  })

  it('a real Prometheus server scrapes the three roles with the documented scrape config', async function () {
    const { requester, providers, contractDb } = net!
    const dir = await mkdtemp(join(tmpdir(), 'dms-prometheus-'))
    const roles = {
      'dms-requester': requester.metricsListener!,
      'dms-provider': providers[0].metricsListener!,
      'dms-contract-db': contractDb.metricsListener!,
    }
    // The documented config with this run's token files and addresses, nothing else changed.
    let yaml = await documentedScrapeConfig()
    for (const [job, l] of Object.entries(roles)) {
      await writeFile(join(dir, `${job}.token`), `${l.token}\n`)
      yaml = yaml.replace(`/etc/prometheus/${job}.token`, join(dir, `${job}.token`))
    }
    // Each job's targets (in the order of `roles`) become this run's listener; a scrape a second.
    const listeners = Object.values(roles)
    yaml = yaml
      .replace(/targets: \[[^\]]*\]/g, () => `targets: ['${listeners.shift()?.address}']`)
      .replace(/^scrape_configs:/m, 'global: { scrape_interval: 1s }\nscrape_configs:')
    await writeFile(join(dir, 'prometheus.yml'), yaml)
    const check = spawnSync('promtool', ['check', 'config', join(dir, 'prometheus.yml')], {
      encoding: 'utf8',
    })
    assert.equal(check.status, 0, check.stdout + check.stderr)
    if (spawnSync('prometheus', ['--version'], { stdio: 'ignore' }).status !== 0) {
      await rm(dir, { recursive: true, force: true })
      return this.skip()
    }
    const port = await freePort()
    const server = spawn(
      'prometheus',
      [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
      ],
      { stdio: 'ignore' },
    )
    const exited = new Promise((r) => server.once('exit', r))
    try {
      // Prometheus is polled: it tells nobody when a scrape is done.
      const deadline = Date.now() + 30_000
      let up: Record<string, string> = {}
      while (Date.now() < deadline) {
        const res = await fetch(`http://127.0.0.1:${port}/api/v1/query?query=up`).catch(() => undefined)
        if (res?.ok === true) {
          const body = (await res.json()) as {
            data: { result: Array<{ metric: { job: string }; value: [number, string] }> }
          }
          up = Object.fromEntries(body.data.result.map((r) => [r.metric.job, r.value[1]]))
          if (Object.keys(roles).every((job) => up[job] === '1')) break
        }
        await new Promise((r) => setTimeout(r, 250))
      }
      assert.deepEqual(up, { 'dms-requester': '1', 'dms-provider': '1', 'dms-contract-db': '1' })
      const q = await fetch(`http://127.0.0.1:${port}/api/v1/query?query=dms_contract_db_conservation_ok`)
      const ok = (await q.json()) as { data: { result: Array<{ value: [number, string] }> } }
      assert.equal(ok.data.result[0]?.value[1], '1')
      // The instance's name survives the scrape under its own label (`instance` is the target's).
      const i = await fetch(`http://127.0.0.1:${port}/api/v1/query?query=dms_contract_db_info`)
      const info = (await i.json()) as { data: { result: Array<{ metric: Record<string, string> }> } }
      const m = info.data.result[0]?.metric ?? {}
      assert.match(m.cdb_instance ?? '', /^[^:]+:\d+$/)
      assert.equal(m.backend, 'level')
      assert.notEqual(m.instance, m.cdb_instance)
    } finally {
      server.kill('SIGTERM')
      await exited
      await rm(dir, { recursive: true, force: true })
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
