/**
 * `dms contract-db` as a real separate process (the built CLI): operated through its socket by the
 * CLI, reached over libp2p by a requester, killed with SIGKILL between escrow lock and settlement,
 * restarted on the same data directory, and settled with nothing lost.
 */
import assert from 'node:assert/strict'
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { promisify } from 'node:util'
import { ApiClient } from '../../../dms/api/client.js'
import { verifyDoc } from '../../../dms/contracts/canonical.js'
import { DOMAIN } from '../../../dms/contracts/model.js'
import { publicKeyOfPeer } from '../../../dms/contracts/party.js'
import { W } from '../../../dms/protocol/behaviours.js'
import { INBOX } from '../../../dms/protocol/handles.js'
import { makeContract, makeSettle, type Who } from '../../helpers/contracts.js'
import { startPeer, type TestPeer } from '../../helpers/peers.js'

const exec = promisify(execFile)

interface Running {
  child: ChildProcess
  peerId: string
  addrs: string[]
  socket: string
}

/** Starts `dms contract-db run` and resolves with its ready line (no sleeping: waits for the line). */
function startContractDb(dataDir: string, configPath: string): Promise<Running> {
  const child = spawn(
    process.execPath,
    ['bin/dms.js', 'contract-db', 'run', '--data-dir', dataDir, '-c', configPath],
    // The service's key is sealed at rest: the process unseals it with DMS_PASSPHRASE.
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, DMS_PASSPHRASE: 'test passphrase' } },
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

const exited = (c: ChildProcess) =>
  c.exitCode !== null || c.signalCode !== null ? Promise.resolve() : new Promise((r) => c.once('exit', r))

describe('dms contract-db (separate process, built CLI)', function () {
  this.timeout(60_000)
  let root: string
  let dataDir: string
  let cfgPath: string
  let svc: Running | undefined
  let requester: TestPeer | undefined
  let provider: TestPeer | undefined

  const cli = async (...args: string[]) => {
    const { stdout } = await exec(process.execPath, [
      'bin/dms.js',
      'contract-db',
      ...args,
      '--data-dir',
      dataDir,
    ])
    return stdout
  }
  // Balances straight from the operator socket (the CLI's `balance` is checked once below).
  const balance = (peer: string) =>
    new ApiClient(svc!.socket).ok<{ balance: number; escrow: number }>(
      'GET',
      `/v1/contract-db/accounts/${peer}`,
    )

  before(() => {
    assert.ok(
      existsSync('dist/dms/cli/main.js'),
      'the CLI is not built: run `npm run build` (scripts/setup.sh does)',
    )
  })
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'dms-cdb-proc-'))
    dataDir = join(root, 'contract-db')
    cfgPath = join(root, 'contract-db.json')
    await writeFile(cfgPath, JSON.stringify({ oneHost: true, listen: ['/ip4/127.0.0.1/tcp/0'] }))
  })
  afterEach(async () => {
    if (svc !== undefined) {
      svc.child.kill('SIGKILL')
      await exited(svc.child)
      svc = undefined
    }
    await requester?.stop()
    await provider?.stop()
    await rm(root, { recursive: true, force: true })
  })

  it('says how to start the service when it is not running', async () => {
    await assert.rejects(cli('balance'), (err: { code: number; stderr: string }) => {
      assert.equal(err.code, 1)
      assert.match(
        err.stderr,
        /no contract-db answers on .*contract-db\.sock: start it with 'dms contract-db run --data-dir /,
      )
      return true
    })
  })

  it('survives kill -9 between escrow lock and settlement: after restart the contract settles', async () => {
    svc = await startContractDb(dataDir, cfgPath)
    const cdbPeer = svc.peerId
    assert.equal((await stat(svc.socket)).mode & 0o777, 0o600, 'operator socket is private')
    requester = await startPeer(svc.addrs)
    provider = await startPeer()
    const req: Who = { key: requester.key, peer: requester.system.peerId }
    const prov: Who = { key: provider.key, peer: provider.system.peerId }

    // The operator approves both parties and credits the requester, through the CLI.
    assert.match(await cli('approve', req.peer), new RegExp(`approved ${req.peer}`))
    await cli('approve', prov.peer)
    await assert.rejects(cli('credit', req.peer, '1.5'), /whole number of micro-tokens/)
    assert.match(
      await cli('credit', req.peer, '1000'),
      new RegExp(`^PEER +BALANCE +ESCROW\n${req.peer} +1000 +0\n$`),
    )

    const actor = requester.system.spawn('test-requester', requester.key)
    const handle = (addrs: string[]) =>
      ({ publicKey: publicKeyOfPeer(cdbPeer)!, peer: cdbPeer, inbox: INBOX.contractDb, addrs }) as never
    const c = makeContract(req, prov, cdbPeer, { pricePerHour: 3600, maxDurationSeconds: 60 })
    const proof = await actor.request(handle(svc.addrs), W.contractVerify, { contract: c })
    assert.equal(proof.escrowLocked, 60)
    assert.deepEqual(await balance(req.peer), { peer: req.peer, balance: 940, escrow: 60 })

    // kill -9: no shutdown, no flush beyond what each batch already wrote.
    svc.child.kill('SIGKILL')
    await exited(svc.child)
    svc = await startContractDb(dataDir, cfgPath)
    assert.equal(svc.peerId, cdbPeer, 'same key after restart')
    assert.deepEqual(
      JSON.parse(await cli('balance', req.peer, '--json')),
      { peer: req.peer, balance: 940, escrow: 60 },
      'escrow survived',
    )

    const s = await actor.request(handle(svc.addrs), W.settle, makeSettle(c, req, prov, { wallSeconds: 10 }))
    const { signature, ...body } = s
    assert.ok(verifyDoc(publicKeyOfPeer(cdbPeer)!, DOMAIN.settlement, body, signature))
    // The receipt claims 10 s; the contract-db bills at most the time it observed since the lock
    // (specs/contract-db.md, "Billing"), here the restart's few seconds.
    assert.equal(s.outcome, 'settled')
    const paid = s.paidToProvider
    assert.ok(paid > 0 && paid <= 10, `paid ${paid}`)
    assert.equal(paid + s.refundedToRequester, 60)
    assert.deepEqual(await balance(req.peer), { peer: req.peer, balance: 1000 - paid, escrow: 0 })
    assert.deepEqual(await balance(prov.peer), { peer: prov.peer, balance: paid, escrow: 0 })
    const { contracts } = JSON.parse(await cli('contracts', '--json')) as {
      contracts: Array<{ state: string }>
    }
    assert.deepEqual(
      contracts.map((x) => x.state),
      ['settled'],
    )
    const table = await cli('contracts')
    assert.match(
      table,
      new RegExp(
        `^CONTRACT +STATE +ESCROW +PAID +REFUNDED +REASON\n${c.terms.contractId} +settled +60 +${paid} +${60 - paid}`,
      ),
    )
    assert.match(await cli('contracts', '-o', 'wide'), / +JOB +REQUESTER +PROVIDER +ACTIVATED +DISPUTED\n/)
    // One page at a time: a bounded limit, a cursor the service gave; anything else is refused.
    assert.doesNotMatch(await cli('contracts', '--limit', '1'), /more:/)
    await assert.rejects(
      cli('contracts', '--limit', '5000'),
      /BAD_LIMIT: limit must be a whole number from 1 to 1000/,
    )
    await assert.rejects(cli('contracts', '--cursor', 'junk'), /BAD_CURSOR/)
    await assert.rejects(cli('disputes', '--limit', '0'), /BAD_LIMIT/)
    // A replayed settlement is refused with the reason, and pays nothing more.
    await assert.rejects(
      actor.request(handle(svc.addrs), W.settle, makeSettle(c, req, prov, { wallSeconds: 10 })),
      (e: { code: string }) => e.code === 'CONTRACT_NOT_ACTIVE',
    )
    assert.deepEqual(await balance(prov.peer), { peer: prov.peer, balance: paid, escrow: 0 })
  })
})
