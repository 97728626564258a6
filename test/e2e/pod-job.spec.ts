/**
 * Pod jobs through the whole market path (real network, real Docker; specs/job-spec.md, "Pods"):
 * one bid request for the summed resources, one provider, one contract that settles, members that
 * share /pod, each member's logs and outputs of its own; a member's network where a provider
 * allows it (and declines where not); a pod too big for every provider ends NO_BIDS with the
 * providers' reasons.
 */
import assert from 'node:assert/strict'
import { execFile, execFileSync } from 'node:child_process'
import { promisify } from 'node:util'
import { ApiClient } from '../../dms/api/client.js'
import { parseJobSpec } from '../../dms/orchestrator/job-spec.js'
import { jobReaches, startNetwork, TEST_IMAGE, type TestNetwork } from '../helpers/network.js'
import { contractedFor } from '../../dms/contracts/terms.js'

const MiB = 1024 * 1024
const execFileP = promisify(execFile)

const member = (name: string, script: string, more: Record<string, unknown> = {}) => ({
  name,
  image: TEST_IMAGE,
  command: ['sh', '-c', script],
  cpu: 0.5,
  memory: '64MiB',
  ...more,
})
const pod = (members: unknown[], more: Record<string, unknown> = {}) =>
  parseJobSpec({ members, maxDuration: 60, maxPrice: 50_000, ...more })

type Logs = { stdout: string; stderr: string; truncated: boolean }

describe('pod jobs (real network, real Docker)', function () {
  this.timeout(60_000)
  let net: TestNetwork
  let api: ApiClient

  before(async function () {
    execFileSync('bash', ['scripts/build-test-image.sh'], { stdio: 'inherit' })
    net = await startNetwork(
      [
        { cpu: 2, memoryBytes: 512 * MiB, perCpuHour: 1000 },
        // The only provider that lets containers use the network.
        { cpu: 2, memoryBytes: 512 * MiB, perCpuHour: 1200, policy: { allowNetwork: true } },
      ],
      { requester: { bidWindowMs: 1500, enoughBids: 2 } },
    )
    api = new ApiClient(net.requester.socketPath!)
  })
  after(async () => net?.stop())

  it('two members on one provider under one settled contract: b reads what a wrote in /pod, both see the inputs, logs by member', async () => {
    const posted = await net.requester.orchestrator!.post(
      pod(
        [
          member(
            'a',
            'echo "a writes $(cat /inputs/in.txt)"; echo -n shared > /pod/x.tmp && mv /pod/x.tmp /pod/x; echo a-out > /outputs/a.txt',
          ),
          member(
            'b',
            'until [ -f /pod/x ]; do sleep 0.1; done; echo "b read $(cat /pod/x)"; echo oops >&2; cat /pod/x > /outputs/got; cat /inputs/in.txt > /outputs/in-copy',
          ),
        ],
        { inputs: [{ path: 'in.txt', content: 'given' }] },
      ),
    )
    const id = posted.record.id
    const done = await jobReaches(net.requester, id)
    assert.equal(done.state, 'completed', JSON.stringify(done.record.error))
    const r = done.record.result!
    assert.deepEqual(
      r.members?.map((m) => [m.name, m.status, m.exitCode]),
      [
        ['a', 'completed', 0],
        ['b', 'completed', 0],
      ],
    )
    // One archive, each member's files under its name.
    assert.deepEqual(
      r.outputs.map((o) => o.path),
      ['a/a.txt', 'b/got', 'b/in-copy'],
    )
    assert.equal(done.record.verification?.outputsHashOk, true)
    // The terms: the members' summed resources, the first member's image.
    const terms = contractedFor(done.record.contract!.terms)
    assert.deepEqual(
      [terms.resources.cpu, terms.resources.memoryBytes, terms.image],
      [1, 128 * MiB, TEST_IMAGE],
    )

    // Each member's logs, filtered by member.
    const a = await api.ok<Logs>('GET', `/v1/jobs/${id}/logs?member=a`)
    const b = await api.ok<Logs>('GET', `/v1/jobs/${id}/logs?member=b`)
    assert.deepEqual([a.stdout, a.stderr], ['a writes given\n', ''])
    assert.deepEqual([b.stdout, b.stderr], ['b read shared\n', 'oops\n'])
    const all = await api.ok<Logs & { members: Array<Logs & { name: string }> }>('GET', `/v1/jobs/${id}/logs`)
    assert.deepEqual(
      all.members.map((m) => [m.name, m.stdout]),
      [
        ['a', 'a writes given\n'],
        ['b', 'b read shared\n'],
      ],
    )
    await assert.rejects(api.ok('GET', `/v1/jobs/${id}/logs?member=c`), { code: 'MEMBER_NOT_FOUND' })
    // The CLI: one member's logs, and a line per member in the status.
    const dms = (...args: string[]) =>
      execFileP(process.execPath, ['bin/dms.js', ...args, '--socket', net.requester.socketPath!], {
        timeout: 30_000,
      })
    const [logsB, logsAll, status] = await Promise.all([
      dms('job', 'logs', id, '--member', 'b'),
      dms('job', 'logs', id),
      dms('job', 'status', id),
    ])
    assert.equal(logsAll.stdout, '==> member a <==\na writes given\n==> member b <==\nb read shared\n')
    assert.deepEqual([logsB.stdout, logsB.stderr], ['b read shared\n', 'oops\n'])
    assert.match(status.stdout, new RegExp(`^member a: ${TEST_IMAGE}  completed, exit code 0$`, 'm'))
    assert.match(status.stdout, new RegExp(`^member b: ${TEST_IMAGE}  completed, exit code 0$`, 'm'))

    // The contract-db holds ONE contract for the pod, and it settled.
    const contracts = (await net.contractDb.service.listContracts()).filter(
      (c) => c.contract.terms.jobId === id,
    )
    assert.deepEqual(
      contracts.map((c) => c.state),
      ['settled'],
    )
    assert.ok(done.record.settlement, 'the requester holds the settlement')
  })

  it("a member's network: a bridge for it where the provider allows it, lo only for its neighbour; declined elsewhere", async () => {
    const posted = await net.requester.orchestrator!.post(
      pod([member('on', 'ls /sys/class/net', { network: true }), member('off', 'ls /sys/class/net')]),
    )
    const done = await jobReaches(net.requester, posted.record.id)
    assert.equal(done.state, 'completed', JSON.stringify(done.record.error))
    assert.equal(done.record.winner?.provider, net.providers[1].peerId)
    const out = (name: string) =>
      done.record.result?.members
        ?.find((m) => m.name === name)
        ?.stdout.split('\n')
        .filter(Boolean)
        .sort()
    assert.deepEqual(out('on'), ['eth0', 'lo'])
    assert.deepEqual(out('off'), ['lo'])
    const declined = done.record.declines?.find((d) => d.provider === net.providers[0].peerId)
    assert.deepEqual(declined?.reasons, ['network not allowed here: member on asks for network access'])
  })

  it('a failing member fails the pod: the other is stopped, the result names the member, the time used is paid', async () => {
    const posted = await net.requester.orchestrator!.post(
      pod([member('ok', 'echo waiting; sleep 30'), member('bad', 'echo broken >&2; exit 3')]),
    )
    const done = await jobReaches(net.requester, posted.record.id)
    assert.equal(done.state, 'failed')
    assert.equal(done.record.error?.code, 'RUN_FAILED')
    const r = done.record.result!
    assert.deepEqual(
      [r.receipt.receipt.status, r.receipt.receipt.exitCode, r.receipt.receipt.reason],
      ['failed', 3, 'member bad: exit code 3'],
    )
    assert.deepEqual(
      r.members?.map((m) => [m.name, m.status, m.stderr]),
      [
        ['ok', 'cancelled', ''],
        ['bad', 'failed', 'broken\n'],
      ],
    )
    assert.ok(done.record.settlement, 'settled: the time used is paid')
  })

  it('quotes a pod: both providers bid for its summed resources, nothing locked', async () => {
    const quote = await net.requester.orchestrator!.quote(pod([member('a', 'true'), member('b', 'true')]))
    assert.equal(quote.bids.length, 2, JSON.stringify(quote.declines))
  })

  it("a pod too big for every provider ends NO_BIDS with the providers' reasons", async () => {
    const posted = await net.requester.orchestrator!.post(
      pod([member('x', 'true', { cpu: 1.5 }), member('y', 'true', { cpu: 1.5 })]),
    )
    const done = await jobReaches(net.requester, posted.record.id)
    assert.equal(done.state, 'failed')
    assert.equal(done.record.error?.code, 'NO_BIDS')
    const reasons = (done.record.declines ?? []).map((d) => d.reasons).sort()
    assert.deepEqual(reasons, [
      ['not enough cpu: need 3 cores, free 2 cores'],
      ['not enough cpu: need 3 cores, free 2 cores'],
    ])
    assert.match(done.record.error?.message ?? '', /not enough cpu/)
  })
})
