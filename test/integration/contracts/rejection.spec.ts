/**
 * No result without payment (issue 29, item 1), on real nodes: a requester that fetched the
 * outputs of a correct run and then settles with `verified = false` does not get its escrow
 * back: the contract-db asks the provider for the result, fetches the archive itself, finds that it
 * matches the receipt and pays the provider (REJECTION_OVERRULED). A provider whose archive does
 * not hold what its receipt says is not paid (the rejection is upheld). The run is the executor's
 * stand-in (a real archive written through the real tar writer); everything else is real: libp2p
 * on 127.0.0.1, level in temp dirs, the contract-db's blob fetch from the provider.
 */
import assert from 'node:assert/strict'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Actor, type Behaviour, type Message } from '../../../actors/actor.js'
import type { BehaviourDef } from '../../../actors/codec.js'
import { RefusedError } from '../../../actors/errors.js'
import { ApiClient } from '../../../dms/api/client.js'
import { signDoc } from '../../../dms/contracts/canonical.js'
import { DOMAIN, type Verification } from '../../../dms/contracts/model.js'
import { W } from '../../../dms/protocol/behaviours.js'
import { INBOX } from '../../../dms/protocol/handles.js'
import type { SettleRequest } from '../../../dms/protocol/messages.js'
import { jobReaches, startNetwork, type TestNetwork } from '../../helpers/network.js'
import { ArchiveExecutor } from '../../helpers/archive-executor.js'

const MiB = 1024 * 1024
const CONTENT = Buffer.from('the answer is 42\n')

/**
 * Makes the requester's settle a rejection signed by the requester, whatever it found: it wraps
 * the contract-db's settle behaviour (registered between `start` and `stop`) so the verification
 * it receives says `verified: false`, signed with the requester's own key, as a requester that
 * wants its escrow back after fetching the outputs would send.
 */
function requesterRejects(key: () => { publicKey: unknown; privateKey: unknown }): { stop(): void } {
  type On = (this: Actor, b: string | BehaviourDef<unknown, unknown>, fn: Behaviour) => Actor
  const on = (Object.getOwnPropertyDescriptor(Actor.prototype, 'on') as { value: On }).value
  const patched = function (this: Actor, b: string | BehaviourDef<unknown, unknown>, fn: Behaviour): Actor {
    const name = typeof b === 'string' ? b : b.name
    if (this.inbox !== INBOX.contractDb || name !== W.settle.name) return on.call(this, b, fn)
    return on.call(this, b, (msg: Message) => {
      const req = msg.payload as SettleRequest
      const verification: Verification = {
        ...req.verification.verification,
        verified: false,
        outputsHashOk: false,
      }
      const signature = signDoc(key() as never, DOMAIN.verification, verification)
      return fn({ ...msg, payload: { ...req, verification: { verification, signature } } })
    })
  }
  Object.defineProperty(Actor.prototype, 'on', { value: patched, configurable: true, writable: true })
  return {
    stop: () =>
      Object.defineProperty(Actor.prototype, 'on', { value: on, configurable: true, writable: true }),
  }
}

/**
 * The blobs inbox of `provider()` refuses `requester()` (and serves anyone else): a provider that
 * withholds the outputs from its requester but not from the contract-db.
 */
function providerWithholds(provider: () => string, requester: () => string): { stop(): void } {
  type On = (this: Actor, b: string | BehaviourDef<unknown, unknown>, fn: Behaviour) => Actor
  const on = (Object.getOwnPropertyDescriptor(Actor.prototype, 'on') as { value: On }).value
  const patched = function (this: Actor, b: string | BehaviourDef<unknown, unknown>, fn: Behaviour): Actor {
    const name = typeof b === 'string' ? b : b.name
    if (this.inbox !== INBOX.blobs || name !== W.blobGet.name) return on.call(this, b, fn)
    const self = this.handle.peer
    return on.call(this, b, (msg: Message) => {
      if (self === provider() && msg.peer === requester())
        throw new RefusedError('BLOB_NOT_GRANTED', 'withheld')
      return fn(msg)
    })
  }
  Object.defineProperty(Actor.prototype, 'on', { value: patched, configurable: true, writable: true })
  return {
    stop: () =>
      Object.defineProperty(Actor.prototype, 'on', { value: on, configurable: true, writable: true }),
  }
}

describe('a rejected result is checked by the contract-db (no result without payment)', function () {
  this.timeout(60_000)
  let net: TestNetwork | undefined
  let dir: string
  let executor: ArchiveExecutor
  let hook: { stop(): void } | undefined

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dms-reject-'))
    executor = new ArchiveExecutor(dir, () => [{ path: 'answer.txt', content: CONTENT }], 0.5)
  })
  afterEach(async () => {
    hook?.stop()
    hook = undefined
    await net?.stop()
    net = undefined
    await rm(dir, { recursive: true, force: true })
  })

  const start = async (o: { rejecting?: boolean } = {}) => {
    // The requester's key exists once its node started; the hook is set before (it wraps `on`).
    const requester: { key?: { publicKey: unknown; privateKey: unknown } } = {}
    if (o.rejecting === true) hook = requesterRejects(() => requester.key!)
    net = await startNetwork([{ cpu: 1, memoryBytes: 512 * MiB, perCpuHour: 3_600_000 }], {
      components: { executor },
    })
    requester.key = net.requester.key as never
    // The requester's gossip stream to the provider is open (see terminate-on-failure.spec.ts).
    const pubsub = net.requester.host.services.pubsub
    const outbound = (pubsub as unknown as { streamsOutbound: Map<string, unknown> }).streamsOutbound
    while (!outbound.has(net.providers[0].peerId))
      await new Promise((r) => pubsub.addEventListener('gossipsub:heartbeat', r, { once: true }))
    return net
  }

  const runJob = async (n: TestNetwork) => {
    const { id } = await new ApiClient(n.requester.socketPath!).ok<{ id: string }>('POST', '/v1/jobs', {
      image: 'dms-test:1',
      command: ['sh', '-c', 'echo 42 > /outputs/answer.txt'],
      resources: { cpu: 1, memory: '64MiB', disk: '16MiB' },
      maxDuration: 60,
      maxPrice: 1_000_000,
    })
    return jobReaches(n.requester, id)
  }

  it('a requester that fetched correct outputs and rejects them pays: the contract-db overrules it', async () => {
    const n = await start({ rejecting: true })
    const job = await runJob(n)
    // It has the outputs: it fetched and checked the archive before it signed its rejection.
    assert.equal(job.record.verification?.outputsHashOk, true)
    const archive = job.record.result!.archive!
    assert.ok(await n.requester.blobs.store.has(archive.sha256), 'the requester kept the outputs')
    const s = job.record.settlement!
    assert.deepEqual([s.outcome, s.reason], ['settled', 'REJECTION_OVERRULED'])
    // Paid by its receipt as a verified settle pays: 0.5 s at 3 600 000 an hour (501, rounded
    // up), capped at the time the contract-db saw from the lock to the settle.
    assert.ok(s.paidToProvider > 0 && s.paidToProvider <= 501, `paid ${s.paidToProvider}`)
    // (The requester's own record says it verified: only its message to the contract-db lied.)
    assert.equal(job.state, 'completed')
    // The money moved as the settlement says, and the operator sees why.
    assert.equal((await n.contractDb.service.account(n.providers[0].peerId)).balance, s.paidToProvider)
    assert.deepEqual(await n.contractDb.service.account(n.requester.peerId), {
      peer: n.requester.peerId,
      balance: 1_000_000 - s.paidToProvider,
      escrow: 0,
    })
    const rec = await n.contractDb.service.contract(job.record.contract!.terms.contractId)
    assert.equal(rec?.arbitration?.outcome, 'overruled')
    assert.match(rec?.arbitration?.reason ?? '', /match the provider's receipt/)
    // The contract-db keeps the archive it checked for the requester that pays for it.
    assert.deepEqual(
      (await readdir(join(n.contractDb.config.dataDir, 'arbitration'))).filter((f) => f !== 'tmp'),
      [archive.sha256],
    )
  })

  it('a provider that withholds the outputs from its requester is paid, and the requester gets them from the contract-db', async () => {
    const ids = { provider: '', requester: '' }
    hook = providerWithholds(
      () => ids.provider,
      () => ids.requester,
    )
    const n = await start()
    ids.provider = n.providers[0].peerId
    ids.requester = n.requester.peerId
    const job = await runJob(n)
    const s = job.record.settlement!
    assert.deepEqual([s.outcome, s.reason], ['settled', 'REJECTION_OVERRULED'])
    assert.ok(s.paidToProvider > 0)
    // The requester's check failed at the provider; the outputs came from the contract-db.
    assert.equal(job.state, 'completed', JSON.stringify(job.record.error))
    assert.equal(job.record.verification?.outputsHashOk, true)
    assert.match(job.record.verification?.outputsProblem ?? '', /fetched from the contract-db/)
    const archive = job.record.result!.archive!
    assert.ok(await n.requester.blobs.store.has(archive.sha256))
    assert.deepEqual(
      await n.requester.blobs.store.read(archive.sha256),
      await n.providers[0].blobs.store.read(archive.sha256),
    )
  })

  it('a provider whose archive does not hold what its receipt says is not paid: the rejection stands', async () => {
    executor.lies = true
    const n = await start()
    const job = await runJob(n)
    assert.equal(job.record.verification?.outputsHashOk, false)
    const s = job.record.settlement!
    assert.deepEqual(
      [s.outcome, s.reason, s.paidToProvider, s.refundedToRequester],
      ['terminated', 'REQUESTER_REJECTED_RESULT', 0, job.record.contract!.terms.escrow],
    )
    assert.equal((await n.contractDb.service.account(n.providers[0].peerId)).balance, 0)
    const rec = await n.contractDb.service.contract(job.record.contract!.terms.contractId)
    assert.equal(rec?.arbitration?.outcome, 'upheld')
    assert.match(
      rec?.arbitration?.reason ?? '',
      /answer\.txt in the archive does not match its manifest entry/,
    )
  })
})
