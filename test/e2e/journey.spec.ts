import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { once } from 'node:events'
import { stat } from 'node:fs/promises'
import { keyFromString } from '../../actors/identity.js'
import { ApiClient } from '../../dms/api/client.js'
import { verifyDoc } from '../../dms/contracts/canonical.js'
import { DOMAIN } from '../../dms/contracts/model.js'
import { publicKeyOfPeer } from '../../dms/contracts/party.js'
import type { StoredJob } from '../../dms/orchestrator/orchestrator.js'
import { jobReaches, startNetwork, TEST_IMAGE, type TestNetwork } from '../helpers/network.js'

const MiB = 1024 * 1024

describe('walking skeleton: a job from REST post to settled contract', function () {
  this.timeout(120_000)
  let net: TestNetwork
  let api: ApiClient

  before(function () {
    execFileSync('bash', ['scripts/build-test-image.sh'], { stdio: 'inherit' })
  })
  beforeEach(async () => {
    net = await startNetwork([
      { cpu: 1, memoryBytes: 512 * MiB, perCpuHour: 3000 }, // dearer
      { cpu: 1, memoryBytes: 512 * MiB, perCpuHour: 1000 }, // cheaper: must win
    ])
    api = new ApiClient(net.requester.socketPath!)
  })
  afterEach(async () => net?.stop())

  it('runs in Docker on the cheaper provider and settles on verified usage', async () => {
    const spec = {
      name: 'hello',
      image: TEST_IMAGE,
      command: ['sh', '-c', 'echo hello from dms; echo -n 42 > /outputs/answer.txt'],
      resources: { cpu: 0.5, memory: '64MiB' },
      maxDuration: 60,
      maxPrice: 10_000,
    }
    // The dearer provider loses: it is told, and frees its reservation before its bid expires.
    const released = once(net.providers[0].provider!.events, 'bid-released')
    const posted = await api.ok<{ id: string; state: string }>('POST', '/v1/jobs', spec)
    const done = await jobReaches(net.requester, posted.id)
    const job = await api.ok<StoredJob['record'] & { state: string }>('GET', `/v1/jobs/${posted.id}`)

    assert.equal(job.state, 'completed', JSON.stringify(job.error))
    // Both providers bid; the cheaper one won, and the record says why.
    const [releasedBid] = (await released) as [string]
    assert.equal(releasedBid, job.bids.find((b) => b.provider === net.providers[0].peerId)?.bidId)
    assert.deepEqual(net.providers[0].ledger!.entries(), [], 'the loser holds nothing for this job')
    assert.equal(job.bids.length, 2)
    const cheap = net.providers[1].peerId
    assert.equal(job.winner?.provider, cheap)
    assert.match(job.winner.why, /lowest score of 2 bids: total/)
    // The contract carries both parties' valid signatures and the contract-db's proof.
    const c = job.contract!
    assert.ok(
      verifyDoc(keyFromString(c.terms.requester.publicKey), DOMAIN.contract, c.terms, c.requesterSignature),
    )
    assert.ok(verifyDoc(publicKeyOfPeer(cheap)!, DOMAIN.contract, c.terms, c.providerSignature!))
    const { signature, ...proofBody } = job.proof!
    assert.ok(verifyDoc(publicKeyOfPeer(net.contractDb.peerId)!, DOMAIN.proof, proofBody, signature))
    // The container's output came back and verified.
    assert.equal(job.result!.stdout.trim(), 'hello from dms')
    // The outputs came as an archive fetched from the provider, checked file by file.
    assert.deepEqual(job.verification, { outputsHashOk: true, receiptSignatureOk: true })
    const listed = await api.ok<{
      files: Array<{ path: string; size: number }>
      archive: { sha256: string }
    }>('GET', `/v1/jobs/${posted.id}/outputs`)
    assert.deepEqual(
      listed.files.map((f) => [f.path, f.size]),
      [['answer.txt', 2]],
    )
    const answer = await api.raw('GET', `/v1/jobs/${posted.id}/outputs/answer.txt`)
    assert.equal(answer.status, 200)
    assert.equal(answer.body.toString(), '42')
    const tar = await api.raw('GET', `/v1/jobs/${posted.id}/outputs.tar`)
    assert.equal(createHash('sha256').update(tar.body).digest('hex'), listed.archive.sha256)
    assert.equal(job.result!.receipt.receipt.exitCode, 0)
    // Settlement moved exactly the escrow: paid + refunded, and balances agree.
    const s = job.settlement!
    assert.equal(s.paidToProvider + s.refundedToRequester, c.terms.escrow)
    assert.ok(s.paidToProvider > 0)
    const cdb = net.contractDb.service
    assert.equal((await cdb.account(cheap)).balance, s.paidToProvider)
    assert.deepEqual(await cdb.account(net.requester.peerId), {
      peer: net.requester.peerId,
      balance: 1_000_000 - s.paidToProvider,
      escrow: 0,
    })
    // The machine's history lists each state in order, with non-decreasing timestamps.
    assert.deepEqual(
      job.history.map((h) => h.state),
      ['bidding', 'selecting', 'contracting', 'invoking', 'running', 'verifying', 'settling', 'completed'],
    )
    for (let i = 1; i < job.history.length; i++) assert.ok(job.history[i].at >= job.history[i - 1].at)
    assert.equal(done.state, 'completed')
    // The job talked through its own child actor: inbox job/<id>, a key that is not the node's.
    const bidRec = (await net.providers[1].provider!.bids.values()).find((b) => b.bid.jobId === posted.id)!
    const keyBytes = (k: unknown) => Buffer.from(Object.values(k as Record<string, number>))
    assert.equal(bidRec.requester.inbox, `job/${posted.id}`)
    assert.equal(bidRec.requester.peer, net.requester.peerId)
    assert.notDeepEqual(keyBytes(bidRec.requester.publicKey), Buffer.from(net.requester.key.publicKey))
    // Updates the allocation sends after the job ended are late, never no_inbox rejections.
    assert.equal(net.requester.system.rejections.no_inbox, undefined)
    // The winner's resources are free again; the loser's reservation is released or expiring.
    assert.equal(net.providers[1].ledger!.summary().allocated.cpu, 0)
    assert.equal((await stat(net.requester.socketPath!)).mode & 0o777, 0o600)
  })

  it('refuses a malformed spec with 400 naming the field', async () => {
    const res = await api.call<{ error: { code: string; field: string; message: string } }>(
      'POST',
      '/v1/jobs',
      {
        image: TEST_IMAGE,
        command: ['sh'],
        resources: { cpu: -1, memory: '64MiB' },
        maxDuration: 10,
        maxPrice: 1,
      },
    )
    assert.equal(res.status, 400)
    assert.equal(res.body.error.code, 'INVALID_JOB_SPEC')
    assert.equal(res.body.error.field, 'resources.cpu')
    const unit = await api.call<{ error: { field: string } }>('POST', '/v1/jobs', {
      image: TEST_IMAGE,
      command: ['sh'],
      resources: { cpu: 1, memory: '64 parsecs' },
      maxDuration: 10,
      maxPrice: 1,
    })
    assert.equal(unit.status, 400)
    assert.equal(unit.body.error.field, 'resources.memory')
    assert.equal(
      (await api.ok<{ jobs: unknown[] }>('GET', '/v1/jobs')).jobs.length,
      0,
      'nothing stored for bad input',
    )
  })

  it("fails a job no provider can serve, with the providers' reasons", async () => {
    const { id } = await api.ok<{ id: string }>('POST', '/v1/jobs', {
      image: TEST_IMAGE,
      command: ['sh', '-c', ':'],
      resources: { cpu: 16, memory: '64MiB' },
      maxDuration: 10,
      maxPrice: 1_000_000,
    })
    const job = await jobReaches(net.requester, id)
    assert.equal(job.state, 'failed')
    assert.equal(job.record.error?.code, 'NO_BIDS')
    assert.equal(job.record.error?.declines?.length, 2)
    for (const d of job.record.error.declines) assert.match(d.reasons.join(), /not enough cpu: need 16 cores/)
    assert.match(job.record.error.message, /not enough cpu/)
  })
})
