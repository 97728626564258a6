/**
 * A requester that serves its input blob slowly cannot pin an allocation in `provisioning`:
 * provisioning has its own budget (`provisionTimeoutMs`, 300 s), past which the allocation fails
 * saying so and its resources are released. (A chunk shorter than asked for, the 1-byte trickle,
 * ends the fetch at once: test/unit/blobs/service.spec.ts.) Real nodes on 127.0.0.1 and a real
 * contract-db; time jumps forward as the blob is served (JumpClock), so the budget runs out in a
 * few dozen chunks instead of five minutes.
 */
import { forTerms } from '../../helpers/workload.js'
import assert from 'node:assert/strict'
import { keyToString } from '../../../actors/identity.js'
import { signDoc } from '../../../dms/contracts/canonical.js'
import { contractIdFor } from '../../../dms/contracts/contract-id.js'
import { DOMAIN, type ContractTerms, type SignedContract } from '../../../dms/contracts/model.js'
import { W } from '../../../dms/protocol/behaviours.js'
import { BID_REQUEST_TOPIC, handleOf, INBOX } from '../../../dms/protocol/handles.js'
import type { JobResult } from '../../../dms/protocol/messages.js'
import { JumpClock } from '../../helpers/jump-clock.js'
import { startNetwork, type TestNetwork } from '../../helpers/network.js'
import type { TestPeer } from '../../helpers/peers.js'
import { bidRequest, rogueRequester, startRogue } from '../../helpers/rogue.js'
import { workloadHash } from '../../../dms/workload/hash.js'

const MiB = 1024 * 1024
/** Chunks served, each moving the clock 10 s: 50 of them are 500 s, past the 300 s budget. */
const CHUNKS = 50

describe('provider: a trickled input cannot pin an allocation in provisioning', function () {
  this.timeout(60_000)
  let net: TestNetwork
  let rogue: TestPeer
  afterEach(async () => {
    await rogue?.stop()
    await net?.stop()
  })

  it('fails the allocation once provisioning passes its budget, and releases its resources', async () => {
    const clock = new JumpClock()
    net = await startNetwork([{ cpu: 1, memoryBytes: 512 * MiB, perCpuHour: 1000 }], {
      components: { clock },
    })
    const p = net.providers[0]
    rogue = await startRogue([...p.addrs(), ...net.contractDb.addrs()], { actorClock: clock })
    await rogue.transport.waitForTopicPeers(BID_REQUEST_TOPIC, 1)
    await net.contractDb.service.approve(rogue.system.peerId)
    await net.contractDb.service.credit(rogue.system.peerId, 1_000_000)
    const approval = await net.contractDb.service.approvalFor(rogue.system.peerId)
    const funds = await net.contractDb.service.fundsFor(rogue.system.peerId)

    // The requester's blobs: each chunk in full, but the clock moves 10 s per chunk.
    let served = 0
    let enough!: () => void
    const trickled = new Promise<void>((resolve) => (enough = resolve))
    // Chunks are served once the invocation is answered: a jump before would time its request out.
    let invokeAnswered!: () => void
    const answered = new Promise<void>((resolve) => (invokeAnswered = resolve))
    rogue.system.spawn(INBOX.blobs, rogue.key).on(W.blobGet, async (m) => {
      await answered
      if (++served <= CHUNKS) clock.jump(10_000)
      if (served === CHUNKS) enough()
      return { size: 64 * MiB, data: new Uint8Array(m.payload.length) }
    })
    const r = rogueRequester(rogue, 'job/pin')
    let got!: (m: JobResult) => void
    const result = new Promise<JobResult>((resolve) => (got = resolve))
    r.actor.on(W.result, (m) => got(m.payload))
    let freed!: () => void
    const released = new Promise<void>((resolve) => (freed = resolve))
    r.actor.on(W.update, (m) => {
      if (m.payload.state === 'released') freed()
    })

    await r.publish(bidRequest('pin-1', 0.5, approval, funds))
    await r.answered(1)
    const bid = r.answers[0].bid!
    const provider = handleOf(p.peerId, INBOX.provider, p.addrs())
    await r.actor.request(provider, W.jobRequest, { jobId: bid.jobId, bidId: bid.bidId })
    const now = clock.now()
    const workload = forTerms(bid, ['sh', '-c', ':'])
    const terms: ContractTerms = {
      contractId: contractIdFor({
        requester: rogue.system.peerId,
        jobId: bid.jobId,
        bidId: bid.bidId,
        createdAt: now,
      }),
      jobId: bid.jobId,
      bidId: bid.bidId,
      requester: { peer: rogue.system.peerId, publicKey: keyToString(rogue.key.publicKey) },
      provider: { peer: p.peerId, publicKey: keyToString(p.key.publicKey) },
      contractDb: net.contractDb.peerId,
      resources: bid.resources,
      image: bid.image,
      workloadHash: workloadHash(workload),
      maxDurationSeconds: bid.maxDurationSeconds,
      escrow: bid.total,
      bid,
      createdAt: now,
      expiresAt: now + 60_000,
    }
    const contract: SignedContract = { terms, requesterSignature: signDoc(rogue.key, DOMAIN.contract, terms) }
    contract.providerSignature = (
      await r.actor.request(provider, W.contractSign, { contract })
    ).providerSignature
    const cdb = handleOf(net.contractDb.peerId, INBOX.contractDb, net.contractDb.addrs())
    const proof = await r.actor.request(cdb, W.contractVerify, { contract })
    await r.actor.request(provider, W.invoke, {
      contract,
      proof,
      inputs: [{ path: 'big', sha256: 'ef'.repeat(32), size: 64 * MiB }],
      workload,
    })
    invokeAnswered()

    const outcome = await Promise.race([result, trickled.then(() => undefined)])
    assert.ok(
      outcome !== undefined,
      `no result after ${CHUNKS} chunks (500 s): the allocation is still provisioning`,
    )
    const receipt = outcome.receipt.receipt
    assert.equal(receipt.status, 'failed')
    assert.match(
      receipt.reason ?? '',
      /^provisioning did not finish within 300 s: the inputs were not staged$/,
    )
    assert.ok(served < CHUNKS, 'the fetch stopped at the deadline')
    await released
    assert.deepEqual(p.ledger!.entries(), [], 'its resources are released')
    const [alloc] = await p.provider!.allocations.repo.values()
    assert.deepEqual(
      alloc.history.map((h) => h.state),
      ['contracted', 'provisioning', 'publishing', 'failed', 'released'],
    )
  })
})
