/**
 * A node's approval credential: asked of a real contract-db over libp2p, refused while the node
 * is not approved, renewed at half its life, kept across a restart, and gone (after its expiry)
 * once the approval is revoked. Time is a manual clock shared by the nodes, advanced by the test.
 */
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ManualClock } from '../../../actors/clock.js'
import { APPROVAL_TTL_MS, checkApproval } from '../../../dms/contracts/approval.js'
import type { ApprovalClient } from '../../../dms/contract-clients/approval-client.js'
import { ContractDbNode } from '../../../dms/contract-db/node.js'
import type { ApprovalCredential } from '../../../dms/contracts/model.js'
import { DmsNode } from '../../../dms/node.js'
import { parseJobSpec } from '../../../dms/orchestrator/job-spec.js'
import { jobReaches, TEST_IMAGE, TEST_PASSPHRASE } from '../../helpers/network.js'

describe('approval credentials from the contract-db', function () {
  this.timeout(30_000)
  let root: string
  let clock: ManualClock
  let cdb: ContractDbNode
  let node: DmsNode
  let client: ApprovalClient
  const startNode = async () => {
    node = new DmsNode(
      {
        dataDir: join(root, 'node'),
        oneHost: true,
        api: false,
        bootstrap: cdb.addrs(),
        requester: { contractDb: { peer: cdb.peerId, addrs: cdb.addrs() } },
      },
      { clock, passphrase: TEST_PASSPHRASE },
    )
    await node.start()
    client = node.approvals.get(cdb.peerId)!
  }
  const next = (event: 'renewed' | 'failed') => once(client.events, event)

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'dms-approval-'))
    clock = new ManualClock(Date.now())
    cdb = new ContractDbNode(
      { dataDir: join(root, 'cdb'), oneHost: true, socket: false },
      { clock, passphrase: TEST_PASSPHRASE },
    )
    await cdb.start()
    await startNode()
  })
  after(async () => {
    await node?.stop()
    await cdb?.stop()
    await rm(root, { recursive: true, force: true })
  })

  it('is refused NOT_APPROVED while the node is not approved, and asked again with backoff', async () => {
    // start() waited for the first answer.
    assert.equal(client.current(), undefined)
    const status = client.status()
    assert.equal(status.approved, false)
    assert.equal(status.lastError?.code, 'NOT_APPROVED')
    assert.match(status.lastError?.message ?? '', /dms contract-db approve/)
    // Retried after 1 s, then 2 s: still refused.
    let failed = next('failed')
    clock.advance(1000)
    await failed
    failed = next('failed')
    clock.advance(1999)
    // Pending: the retry, and the contract-db's expiry sweep (the same clock drives both).
    assert.equal(clock.pending, 2, 'the next retry waits 2 s')
    clock.advance(1)
    await failed
  })

  it('once approved, the next attempt gets a credential signed by the contract-db for this peer', async () => {
    await cdb.service.approve(node.peerId)
    const renewed = next('renewed')
    clock.advance(4000)
    const [cred] = (await renewed) as [ApprovalCredential]
    assert.deepEqual(client.current(), cred)
    assert.equal(cred.peer, node.peerId)
    assert.equal(cred.expiresAt - cred.issuedAt, APPROVAL_TTL_MS)
    assert.equal(
      checkApproval(cred, { peer: node.peerId, contractDb: cdb.peerId, now: clock.now() }),
      undefined,
    )
    assert.deepEqual(client.status(), { contractDb: cdb.peerId, approved: true, expiresAt: cred.expiresAt })
  })

  it('is renewed at half its life, so it never runs out while the contract-db answers', async () => {
    const before = client.current()!
    const renewed = next('renewed')
    clock.advance(APPROVAL_TTL_MS / 2)
    const [cred] = (await renewed) as [ApprovalCredential]
    assert.ok(cred.expiresAt > before.expiresAt)
    assert.equal(cred.issuedAt, clock.now())
  })

  it('after a revocation the credential is not renewed and is gone once it expires', async () => {
    await cdb.service.revoke(node.peerId)
    const expiresAt = client.current()!.expiresAt
    await client.refresh()
    assert.equal(client.status().lastError?.code, 'NOT_APPROVED')
    assert.ok(client.current(), 'valid until its expiry: the TTL bounds a revocation')
    // Stopped, so no retry is on the wire while the test jumps time.
    await node.stop()
    clock.advance(expiresAt - clock.now())
    assert.equal(client.current(), undefined)
    assert.equal(client.status().approved, false)
  })

  it('is kept in the database: a restart with the contract-db down still has it', async () => {
    await cdb.service.approve(node.peerId)
    await startNode() // no valid credential stored: it asks, and start waits for the answer
    const held = client.current()
    assert.ok(held)
    await cdb.stop()
    await node.stop()
    await startNode()
    assert.deepEqual(client.current(), held)
    // Its renewal fails while the contract-db is down, and is retried.
    const failed = next('failed')
    clock.advance(APPROVAL_TTL_MS / 2)
    await failed
    assert.equal(client.status().approved, true, 'still valid: it expires later')
    assert.match(client.status().lastError?.code ?? '', /UNREACHABLE|REQUEST_TIMEOUT/)
  })
})

describe('a requester without an approval credential', function () {
  this.timeout(30_000)
  let root: string
  let cdb: ContractDbNode
  let node: DmsNode

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'dms-approval-'))
    cdb = new ContractDbNode(
      { dataDir: join(root, 'cdb'), oneHost: true, socket: false },
      { passphrase: TEST_PASSPHRASE },
    )
    await cdb.start()
    node = new DmsNode(
      {
        dataDir: join(root, 'node'),
        oneHost: true,
        api: false,
        bootstrap: cdb.addrs(),
        requester: { contractDb: { peer: cdb.peerId, addrs: cdb.addrs() }, requestTimeoutMs: 500 },
      },
      { passphrase: TEST_PASSPHRASE },
    )
    await node.start()
  })
  after(async () => {
    await node?.stop()
    await cdb?.stop()
    await rm(root, { recursive: true, force: true })
  })

  it('fails its job NOT_APPROVED, saying how to approve it, without publishing anything', async () => {
    const posted = await node.orchestrator!.post(
      parseJobSpec({
        image: TEST_IMAGE,
        command: ['true'],
        resources: { cpu: 0.1, memory: '16MiB' },
        maxDuration: 60,
        maxPrice: 1000,
      }),
    )
    const job = await jobReaches(node, posted.record.id)
    assert.equal(job.state, 'failed')
    assert.equal(job.record.error?.code, 'NOT_APPROVED')
    assert.match(
      job.record.error.message,
      new RegExp(`NOT_APPROVED: .*dms contract-db approve ${node.peerId}`),
    )
    assert.deepEqual(
      job.record.history.map((h) => h.state),
      ['bidding', 'failed'],
    )
  })
})
