/**
 * Failover between contract-db instances (specs/contract-db.md, "Failover between instances"):
 * two `dms contract-db run` processes with one key (one peer id, each its own address) over one
 * PostgreSQL database, reached by a requester's ContractDbClient that knows both addresses. One
 * instance stopped with SIGSTOP (silent: its kernel still accepts the TCP connection) and one
 * killed with SIGKILL: the next request is answered by the other instance. The requester's
 * request timeouts and backoffs run on a ManualClock, so a silence costs no real time here.
 */
import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { peerIdFromString } from '@libp2p/peer-id'
import { ManualClock } from '../../../actors/clock.js'
import { ApiClient } from '../../../dms/api/client.js'
import { ContractDbClient } from '../../../dms/contract-clients/client.js'
import { makeContract, makeSettle, type Who } from '../../helpers/contracts.js'
import { startPeer, type TestPeer } from '../../helpers/peers.js'
import { startPostgres, type TestPostgres } from '../../helpers/postgres.js'
import { freshDatabase } from '../../helpers/postgres-db.js'

interface Instance {
  child: ChildProcess
  peerId: string
  addrs: string[]
  socket: string
}

const PASSPHRASE = 'test passphrase'
const TIMEOUT_MS = 5000

/** Starts `dms contract-db run` (the built CLI) and resolves with its ready line. */
function startInstance(dataDir: string, configPath: string): Promise<Instance> {
  const child = spawn(
    process.execPath,
    ['bin/dms.js', 'contract-db', 'run', '--data-dir', dataDir, '-c', configPath],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, DMS_PASSPHRASE: PASSPHRASE } },
  )
  let stderr = ''
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
  return new Promise((resolve, reject) => {
    child.once('exit', (code) =>
      reject(new Error(`contract-db exited (${code}) before ready:\n${stderr.slice(-2000)}`)),
    )
    createInterface({ input: child.stdout }).on('line', (line) => {
      const ready = JSON.parse(line) as { event: string; peerId: string; addrs: string[]; socket: string }
      if (ready.event === 'ready') resolve({ child, ...ready })
    })
  })
}

const bare = (addrs: string[]) => addrs.map((x) => x.replace(/\/p2p\/.*$/, ''))

const exited = (c: ChildProcess) =>
  c.exitCode !== null || c.signalCode !== null ? Promise.resolve() : new Promise((r) => c.once('exit', r))

describe('contract-db failover: two instances, one identity, one PostgreSQL', function () {
  this.timeout(120_000)
  let cluster: TestPostgres | undefined
  let root: string
  let a: Instance
  let b: Instance
  /** The instance that served first (stopped in the first test), and the other one. */
  let serving: Instance
  let other: Instance
  let requester: TestPeer
  let clock: ManualClock
  let client: ContractDbClient
  const req = { key: undefined, peer: '' } as unknown as Who
  const prov = { key: undefined, peer: '' } as unknown as Who

  before(async function () {
    assert.ok(existsSync('dist/dms/cli/main.js'), 'the CLI is not built: run `npm run build`')
    cluster = await startPostgres()
    if (cluster === undefined) this.skip()
    root = await mkdtemp(join(tmpdir(), 'dms-cdb-failover-'))
    const { url } = await freshDatabase(cluster)
    const config = async (name: string) => {
      const path = join(root, `${name}.json`)
      await writeFile(
        path,
        JSON.stringify({
          oneHost: true,
          listen: ['/ip4/127.0.0.1/tcp/0'],
          instance: name,
          store: { backend: 'postgres', url },
        }),
      )
      return path
    }
    a = await startInstance(join(root, 'a'), await config('a'))
    // Step A: the second instance holds a copy of the same sealed key.
    await mkdir(join(root, 'b'), { recursive: true, mode: 0o700 })
    await copyFile(join(root, 'a', 'node.key'), join(root, 'b', 'node.key'))
    b = await startInstance(join(root, 'b'), await config('b'))
    assert.equal(b.peerId, a.peerId)

    // Envelopes carry the requester's time: the clock starts at the real one.
    clock = new ManualClock(Date.now())
    requester = await startPeer([], { actorClock: clock })
    const provider = await startPeer()
    Object.assign(req, { key: requester.key, peer: requester.system.peerId })
    Object.assign(prov, { key: provider.key, peer: provider.system.peerId })
    await provider.stop()
    const api = new ApiClient(a.socket)
    for (const p of [req.peer, prov.peer]) await api.ok('PUT', `/v1/contract-db/approved/${p}`)
    await api.ok('POST', `/v1/contract-db/accounts/${req.peer}/credit`, { amount: 10_000 })

    const actor = requester.system.spawn('test-requester', requester.key)
    client = new ContractDbClient(
      { actor, clock },
      { contractDb: { peer: a.peerId, addrs: [...a.addrs, ...b.addrs] }, timeoutMs: TIMEOUT_MS, attempts: 3 },
    )
  })

  after(async () => {
    for (const i of [a, b]) {
      if (i === undefined) continue
      i.child.kill('SIGCONT')
      i.child.kill('SIGKILL')
      await exited(i.child)
    }
    await requester?.stop()
    await cluster?.stop()
    if (root !== undefined) await rm(root, { recursive: true, force: true })
  })

  /** The address the requester is connected to the contract-db at (without its /p2p/ part). */
  const connectedAt = (): string[] =>
    requester.host
      .getConnections(peerIdFromString(a.peerId))
      .map((c) => c.remoteAddr.toString().replace(/\/p2p\/.*$/, ''))

  /** Runs `call` and, once its request is waiting on the silent instance, lets that time out. */
  async function afterOneTimeout<T>(call: Promise<T>): Promise<T> {
    await clock.scheduled(TIMEOUT_MS)
    await clock.advanceAsync(TIMEOUT_MS)
    return call
  }

  it('an instance that goes silent (SIGSTOP): the request is answered by the other one after one timeout', async function () {
    // Without failover the retry waits on the silent instance again, and this runs out.
    this.timeout(20_000)
    const first = makeContract(req, prov, a.peerId, { pricePerHour: 3600, maxDurationSeconds: 60 })
    await client.verify(first)
    // libp2p picked one of the two addresses: that instance goes silent.
    ;[serving, other] = connectedAt()[0] === bare(a.addrs)[0] ? [a, b] : [b, a]
    assert.deepEqual(connectedAt(), bare(serving.addrs))

    serving.child.kill('SIGSTOP')
    try {
      const second = makeContract(req, prov, a.peerId, { pricePerHour: 3600, maxDurationSeconds: 60 })
      const proof = await afterOneTimeout(client.verify(second))
      assert.equal(proof.contractId, second.terms.contractId)
      assert.equal(proof.escrowLocked, 60)
      assert.deepEqual(
        connectedAt(),
        bare(other.addrs),
        'the silent instance was dropped, the other one answered',
      )

      // A close of the first contract, locked by the silent instance, is answered by the other.
      const s = await client.settle(makeSettle(first, req, prov, { wallSeconds: 10 }), first.terms)
      assert.equal(s.paidToProvider + s.refundedToRequester, 60)
      const books = await new ApiClient(other.socket).ok<{ balance: number; escrow: number }>(
        'GET',
        `/v1/contract-db/accounts/${req.peer}`,
      )
      assert.deepEqual([books.balance + books.escrow + s.paidToProvider, books.escrow], [10_000, 60])
    } finally {
      serving.child.kill('SIGCONT')
    }
  })

  it('an instance killed (SIGKILL): the next request dials the other one', async function () {
    this.timeout(20_000)
    // Served by `other` now (the test above); it dies and the one resumed answers. (That one may
    // have dialled the requester itself to answer what it had read while stopped.)
    const atB = () => connectedAt().includes(bare(other.addrs)[0])
    const gone = new Promise<void>((resolve) => {
      const check = () => {
        if (atB()) return
        requester.host.removeEventListener('connection:close', check)
        resolve()
      }
      requester.host.addEventListener('connection:close', check)
      // Not connected there any more (closed before this test began): no close event will come.
      check()
    })
    other.child.kill('SIGKILL')
    await exited(other.child)
    await gone
    const c = makeContract(req, prov, a.peerId, { pricePerHour: 3600, maxDurationSeconds: 60 })
    const proof = await client.verify(c)
    // Answered: the killed instance is gone, so the live one did. Its connection may be one it
    // dialled itself (its remote address is then an ephemeral port, not its listen address).
    assert.equal(proof.contractId, c.terms.contractId)
    assert.ok(!atB(), 'no connection left to the killed instance')
  })
})
