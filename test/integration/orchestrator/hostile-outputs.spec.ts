/**
 * A hostile provider that stalls the output archive (red-team finding after issue 13), on real
 * nodes: it runs nothing, signs a receipt for a one-file manifest and then answers each
 * `/dms/blob/get` slowly with a 1-byte chunk (a trickle), or never. The requester must not stay
 * in `verifying`: a short chunk fails the outputs check (escrow refunded), and a CANCEL while
 * verifying ends the job `cancelled`, terminated on the receipt.
 */
import assert from 'node:assert/strict'
import { createHash, randomUUID } from 'node:crypto'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Message } from '../../../actors/system.js'
import { archiveSizeOf } from '../../../dms/workload/tar.js'
import { signDoc } from '../../../dms/contracts/canonical.js'
import {
  DOMAIN,
  type ApprovalCredential,
  type Bid,
  type ContractTerms,
} from '../../../dms/contracts/model.js'
import { escrowFor } from '../../../dms/contracts/money.js'
import { parseJobSpec } from '../../../dms/orchestrator/job-spec.js'
import { W } from '../../../dms/protocol/behaviours.js'
import { BID_REQUEST_TOPIC, INBOX } from '../../../dms/protocol/handles.js'
import type { BidRequest, JobResult, OutputEntry } from '../../../dms/protocol/messages.js'
import { hashOutputs } from '../../../dms/workload/outputs.js'
import { jobReaches, startNetwork, TEST_IMAGE, type TestNetwork } from '../../helpers/network.js'
import { startPeer, type TestPeer } from '../../helpers/peers.js'
import { tarOf } from '../../helpers/tar.js'
import { imageOfNeeds } from '../../../dms/workload/needs.js'
import { workloadTotals } from '../../../dms/workload/workload.js'

const PRICE_PER_HOUR = 36_000
const MANIFEST = [{ path: 'a', sha256: 'cd'.repeat(32), size: 3 * 1024 * 1024 }]
/** The archive the manifest makes (4 chunks), so the requester's size rule lets the fetch start. */
const ARCHIVE = { sha256: 'ab'.repeat(32), size: archiveSizeOf(MANIFEST) }

/** What a hostile provider announces: a manifest and the archive said to hold it. */
interface Announced {
  manifest: OutputEntry[]
  archive: { sha256: string; size: number }
}

/**
 * A provider that bids on everything, plays along to the contract, then sends a signed receipt of
 * a 2 s run with MANIFEST (or `announced`) at once, and serves the archive as `serve` says.
 */
function hostileProvider(
  rogue: TestPeer,
  approval: ApprovalCredential,
  serve: { chunk: (length: number, offset: number) => Promise<{ size: number; data: Uint8Array }> },
  announced: Announced = { manifest: MANIFEST, archive: ARCHIVE },
): { chunksAsked: () => number } {
  let asked = 0
  rogue.system.spawn(INBOX.blobs, rogue.key).on(W.blobGet, (m) => {
    asked++
    return serve.chunk(m.payload.length, m.payload.offset)
  })
  const actor = rogue.system.spawn(INBOX.provider, rogue.key)
  actor
    .subscribe(BID_REQUEST_TOPIC)
    .on(W.bidRequest, async (m: Message) => {
      const req = m.payload as BidRequest
      const now = Date.now()
      const body: Omit<Bid, 'signature'> = {
        bidId: randomUUID(),
        jobId: req.jobId,
        provider: rogue.system.peerId,
        resources: workloadTotals(req.workloadNeeds),
        image: imageOfNeeds(req.workloadNeeds)!,
        maxDurationSeconds: req.maxDurationSeconds,
        pricePerHour: PRICE_PER_HOUR,
        minJobPrice: 0,
        total: escrowFor(PRICE_PER_HOUR, req.maxDurationSeconds, 0),
        earliestStart: now,
        expectedFinish: now + req.maxDurationSeconds * 1000,
        expiresAt: now + 30_000,
        resourcesReserved: true,
      }
      await actor.send(m.from, W.bid, {
        bid: { ...body, signature: signDoc(rogue.key, DOMAIN.bid, body) },
        approval,
      })
    })
    .on(W.jobRequest, () => ({ locked: true, lockedUntil: Date.now() + 60_000 }))
    .on(W.contractSign, (m: Message) => {
      const terms = (m.payload as { contract: { terms: ContractTerms } }).contract.terms
      return { providerSignature: signDoc(rogue.key, DOMAIN.contract, terms) }
    })
    .on(W.invoke, (m: Message) => {
      const t = (m.payload as { contract: { terms: ContractTerms } }).contract.terms
      const alloc = rogue.system.spawn(`alloc/${t.jobId}`, rogue.key)
      const to = m.from
      setImmediate(() => {
        void (async () => {
          await alloc.send(to, W.update, {
            jobId: t.jobId,
            allocationId: t.jobId,
            state: 'running',
            at: Date.now(),
          })
          const receipt = {
            contractId: t.contractId,
            jobId: t.jobId,
            allocationId: t.jobId,
            status: 'completed' as const,
            exitCode: 0,
            outputsHash: hashOutputs(announced.manifest),
            usage: { wallSeconds: 2, cpuSeconds: 0, peakMemoryBytes: 0 },
            finishedAt: Date.now(),
          }
          const result: JobResult = {
            jobId: t.jobId,
            receipt: { receipt, signature: signDoc(rogue.key, DOMAIN.receipt, receipt) },
            stdout: 'I did nothing\n',
            stderr: '',
            truncated: false,
            outputs: announced.manifest,
            archive: announced.archive,
          }
          await alloc.send(to, W.result, result)
        })()
      })
      return { allocationId: t.jobId }
    })
  return { chunksAsked: () => asked }
}

describe('a hostile provider stalling the output archive', function () {
  this.timeout(60_000)
  let net: TestNetwork
  let rogue: TestPeer
  let net0Dir: string
  beforeEach(async () => {
    net0Dir = await mkdtemp(join(tmpdir(), 'dms-hostile-outputs-'))
  })
  afterEach(async () => {
    await rogue?.stop()
    await net?.stop()
    await rm(net0Dir, { recursive: true, force: true })
  })

  /** The requester's blob store: its blobs and its temp files (none is expected here). */
  async function requesterBlobFiles(): Promise<string[]> {
    const { dir, tmpDir } = net.requester.blobs.store
    const top = (await readdir(dir)).filter((f) => f !== 'tmp')
    return [...top, ...(await readdir(tmpDir)).map((f) => `tmp/${f}`)]
  }

  async function start(
    serve: { chunk: (length: number, offset: number) => Promise<{ size: number; data: Uint8Array }> },
    requester: { outputsMinBytesPerSecond?: number; outputsFetchGraceMs?: number } = {},
    announced?: Announced,
  ) {
    net = await startNetwork([], { requester: { bidWindowMs: 2000, ...requester } })
    rogue = await startPeer(net.requester.addrs())
    await net.contractDb.service.approve(rogue.system.peerId)
    const approval = await net.contractDb.service.approvalFor(rogue.system.peerId)
    const hostile = hostileProvider(rogue, approval, serve, announced)
    await net.requester.transport.waitForTopicPeers(BID_REQUEST_TOPIC, 1)
    const before = await net.contractDb.service.account(net.requester.peerId)
    const posted = await net.requester.orchestrator!.post(
      parseJobSpec({
        image: TEST_IMAGE,
        command: ['true'],
        resources: { cpu: 0.5, memory: '64MiB' },
        maxDuration: 600,
        maxPrice: 1_000_000,
      }),
    )
    return { hostile, before, id: posted.record.id }
  }

  it('a trickle (1-byte chunks, slow): the outputs fail at the first short chunk and the escrow is refunded', async () => {
    // Each chunk after 1 s: at 1 byte a chunk, about 36 days for this archive.
    const { hostile, before, id } = await start({
      chunk: () =>
        new Promise((r) => setTimeout(() => r({ size: ARCHIVE.size, data: new Uint8Array(1) }), 1000)),
    })
    const job = await jobReaches(net.requester, id)
    assert.equal(job.state, 'failed')
    assert.equal(job.record.error?.code, 'VERIFICATION_FAILED')
    assert.equal(job.record.verification?.outputsHashOk, false)
    assert.match(job.record.verification?.outputsProblem ?? '', /BAD_CHUNK|chunk at 0 is 1 bytes/)
    assert.equal(hostile.chunksAsked(), 1, 'no second chunk is asked for')
    assert.deepEqual(await requesterBlobFiles(), [], 'nothing kept, no partial file')
    assert.equal(job.record.settlement?.paidToProvider, 0)
    assert.deepEqual(await net.contractDb.service.account(net.requester.peerId), before, 'escrow refunded')
  })

  it('full chunks slower than the minimum rate: the fetch ends at its deadline and the escrow is refunded', async () => {
    // 4 chunks of 1 MiB, each after 1 s; at least 4 MiB/s wanted, no grace: a 0.75 s budget.
    const { hostile, before, id } = await start(
      {
        chunk: (length) =>
          new Promise((r) => setTimeout(() => r({ size: ARCHIVE.size, data: new Uint8Array(length) }), 1000)),
      },
      { outputsMinBytesPerSecond: 4 * 1024 * 1024, outputsFetchGraceMs: 0 },
    )
    const job = await jobReaches(net.requester, id)
    assert.equal(job.record.error?.code, 'VERIFICATION_FAILED')
    const budgetMs = Math.ceil((ARCHIVE.size * 1000) / (4 * 1024 * 1024))
    assert.equal(
      job.record.verification?.outputsProblem,
      `archive not fetched: ${ARCHIVE.size} bytes not received within ${budgetMs} ms (the minimum rate)`,
    )
    assert.ok(hostile.chunksAsked() < 4, 'given up before the whole archive')
    assert.deepEqual(await requesterBlobFiles(), [], 'the chunks received are not kept')
    assert.deepEqual(await net.contractDb.service.account(net.requester.peerId), before, 'escrow refunded')
  })

  it('an archive that hashes to its id but not to its manifest is not kept in the requester store (issue 29)', async () => {
    // A real archive of 'a' = "yes", under a manifest that says 'a' holds "no!".
    const tar = await tarOf(join(net0Dir, 'lying.tar'), [{ path: 'a', content: Buffer.from('yes') }])
    const bytes = await readFile(tar.file)
    const announced: Announced = {
      manifest: [{ path: 'a', sha256: createHash('sha256').update('no!').digest('hex'), size: 3 }],
      archive: { sha256: tar.sha256, size: tar.size },
    }
    const { hostile, before, id } = await start(
      {
        chunk: (length, offset) =>
          Promise.resolve({ size: bytes.length, data: bytes.subarray(offset, offset + length) }),
      },
      {},
      announced,
    )
    const job = await jobReaches(net.requester, id)
    assert.equal(job.record.error?.code, 'VERIFICATION_FAILED')
    assert.equal(
      job.record.verification?.outputsProblem,
      'a in the archive does not match its manifest entry',
    )
    assert.ok(hostile.chunksAsked() >= 1, 'the archive was fetched')
    assert.equal(await net.requester.blobs.store.has(tar.sha256), false, 'the unverified archive is gone')
    assert.deepEqual(await requesterBlobFiles(), [])
    assert.deepEqual(await net.contractDb.service.account(net.requester.peerId), before, 'escrow refunded')
  })

  it('an archive that never comes: CANCEL while verifying ends the job cancelled, terminated on the receipt', async () => {
    const { before, id } = await start({ chunk: () => new Promise(() => {}) })
    await jobReaches(net.requester, id, ['verifying'])
    await net.requester.orchestrator!.cancel(id)
    const job = await jobReaches(net.requester, id)
    assert.equal(job.state, 'cancelled')
    const s = job.record.settlement
    assert.equal(s?.outcome, 'terminated')
    assert.equal(s?.reason, 'REQUESTER_CANCELLED')
    // The receipt's 2 s are paid, capped at the time the contract-db observed since the lock
    // (specs/contract-db.md, "Billing"); the rest of the escrow comes back.
    const escrow = escrowFor(PRICE_PER_HOUR, 600, 0)
    assert.equal(s.paidToProvider + s.refundedToRequester, escrow)
    assert.ok(s.billedSeconds > 0 && s.billedSeconds <= 2, `billed ${s.billedSeconds} s`)
    const after = await net.contractDb.service.account(net.requester.peerId)
    assert.equal(after.balance, before.balance - s.paidToProvider)
  })
})
