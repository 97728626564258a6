import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { createWriteStream } from 'node:fs'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { privateKeyFromRaw } from '@libp2p/crypto/keys'
import { ApiClient } from '../api/client.js'
import type { NodeConfig } from '../config.js'
import type { ContractDbConfig } from '../contracts/contract-db-node.js'
import { verifyDoc } from '../contracts/canonical.js'
import { DOMAIN } from '../contracts/model.js'
import { publicKeyOfPeer } from '../contracts/party.js'
import { keyFromString } from '../../actors/identity.js'
import { loadOrCreateKey, PASSPHRASE_ENV } from '../keys.js'
import { CliError, print } from './output.js'
import { follow } from './job.js'

const run = promisify(execFile)
const BIN = fileURLToPath(new URL('../../../bin/dms.js', import.meta.url))
const MiB = 1024 * 1024

interface Proc {
  name: string
  child: ChildProcess
  peerId: string
  addrs: string[]
  socket: string
  logPath: string
}

async function peerIdOf(dataDir: string, passphrase: string): Promise<string> {
  const { key } = await loadOrCreateKey(dataDir, () => Promise.resolve(passphrase))
  return peerIdFromPrivateKey(privateKeyFromRaw(key.libp2pRaw())).toString()
}

/**
 * Starts `dms run` (or, with `command`, e.g. `contract-db run`) in its own process and resolves
 * with its ready line.
 */
async function startProcess(
  root: string,
  name: string,
  cfg: NodeConfig | ContractDbConfig,
  command = ['run'],
): Promise<Proc> {
  const cfgPath = join(root, `${name}.json`)
  await writeFile(cfgPath, JSON.stringify(cfg, null, 2))
  const logPath = join(root, `${name}.log`)
  const child = spawn(process.execPath, [BIN, ...command, '--config', cfgPath], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  child.stderr?.pipe(createWriteStream(logPath))
  const lines = createInterface({ input: child.stdout })
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) =>
      void readFile(logPath, 'utf8')
        .catch(() => '')
        .then((log) =>
          reject(
            new CliError(
              `${name} exited (code ${code}) before it was ready:\n${log.split('\n').slice(-15).join('\n')}`,
            ),
          ),
        )
    child.once('exit', onExit)
    lines.on('line', (line) => {
      try {
        const ready = JSON.parse(line) as { event?: string; peerId: string; addrs: string[]; socket: string }
        if (ready.event !== 'ready') return
        child.off('exit', onExit)
        resolve({ name, child, peerId: ready.peerId, addrs: ready.addrs, socket: ready.socket, logPath })
      } catch {
        /* not the ready line */
      }
    })
  })
}

async function stopProcess(p: Proc): Promise<void> {
  if (p.child.exitCode !== null) return
  const exited = new Promise((r) => p.child.once('exit', r))
  p.child.kill('SIGTERM')
  await exited
}

const short = (peer: string) => `…${peer.slice(-10)}`
const ok = (b: boolean) => (b ? 'valid' : 'INVALID')

/**
 * `dms demo`: a local network of separate processes (contract-db, two providers, a requester) on
 * 127.0.0.1 that runs one real job in Docker to settlement, printing each step of the journey.
 */
export async function demoCommand(opts: { image: string; keep?: boolean }): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'dms-demo-'))
  const procs: Proc[] = []
  try {
    print(`DMS demo: a local network on 127.0.0.1 (data and logs in ${root})`)
    const dirs = {
      cdb: join(root, 'contract-db'),
      a: join(root, 'provider-a'),
      b: join(root, 'provider-b'),
      req: join(root, 'requester'),
    }
    for (const d of Object.values(dirs)) await mkdir(d, { recursive: true })
    // Keys are sealed at rest: DMS_PASSPHRASE when set, else a throwaway one for this demo only.
    // Every child process (nodes, the contract-db and its operator CLI) inherits it.
    const pass = process.env[PASSPHRASE_ENV] || randomBytes(16).toString('hex')
    if (opts.keep === true && !process.env[PASSPHRASE_ENV]) {
      await writeFile(join(root, 'passphrase'), pass, { mode: 0o600 })
      print(`  keys sealed with a generated passphrase, kept in ${join(root, 'passphrase')}`)
    }
    process.env[PASSPHRASE_ENV] = pass
    const ids = {
      a: await peerIdOf(dirs.a, pass),
      b: await peerIdOf(dirs.b, pass),
      req: await peerIdOf(dirs.req, pass),
    }
    const base = { listen: ['/ip4/127.0.0.1/tcp/0'], oneHost: true }

    const cdb = await startProcess(root, 'contract-db', { ...base, dataDir: dirs.cdb }, [
      'contract-db',
      'run',
    ])
    procs.push(cdb)
    // The operator approves the three peers and credits the requester through the CLI.
    const operator = (...args: string[]) =>
      run(process.execPath, [BIN, 'contract-db', ...args, '--data-dir', dirs.cdb]).catch((err: unknown) => {
        throw new CliError(
          `dms contract-db ${args.join(' ')} failed: ${(err as { stderr?: string }).stderr ?? String(err)}`,
        )
      })
    for (const peer of [ids.a, ids.b, ids.req]) await operator('approve', peer)
    await operator('credit', ids.req, '100000000')
    print(
      `  contract-db  ${cdb.peerId}  (dms contract-db run) approved 3 peers, credited the requester 100000000`,
    )
    const offer = (perCpuHour: number) => ({
      cpu: 1,
      memoryBytes: 512 * MiB,
      diskBytes: 1024 * MiB,
      gpus: 0,
      prices: { perCpuHour, perGiBMemoryHour: 10_000, perGiBDiskHour: 0, perGpuHour: 0, minJobPrice: 1 },
    })
    const names: Record<string, string> = { [cdb.peerId]: 'contract-db' }
    for (const [k, price] of [
      ['a', 3_600_000],
      ['b', 1_200_000],
    ] as const) {
      const p = await startProcess(root, `provider-${k}`, {
        ...base,
        dataDir: dirs[k],
        bootstrap: cdb.addrs,
        provider: { contractDb: cdb.peerId, offer: offer(price) },
      })
      procs.push(p)
      names[p.peerId] = `provider-${k}`
      print(`  provider-${k}   ${p.peerId}  offers 1 cpu, 512 MiB at ${price}/cpu-hour`)
    }
    const req = await startProcess(root, 'requester', {
      ...base,
      dataDir: dirs.req,
      bootstrap: procs.flatMap((p) => p.addrs),
      requester: { contractDb: { peer: cdb.peerId, addrs: cdb.addrs }, bidWindowMs: 3000 },
    })
    procs.push(req)
    names[req.peerId] = 'requester'
    print(`  requester    ${req.peerId}  REST API on ${req.socket}`)

    const api = new ApiClient(req.socket)
    // Wait (bounded) until the requester's gossip view includes both providers.
    for (let i = 0; (await api.ok<{ bidTopicPeers: number }>('GET', '/v1/info')).bidTopicPeers < 2; i++) {
      if (i > 100) throw new CliError('the requester did not see both providers within 15 s')
      await new Promise((r) => setTimeout(r, 150))
    }

    const spec = {
      name: 'hello',
      image: opts.image,
      command: [
        'sh',
        '-c',
        'echo "hello from $(id -u) on $(hostname)"; echo -n 42 > /outputs/answer.txt; sleep 1',
      ],
      resources: { cpu: 0.5, memory: '64MiB' },
      maxDuration: 60,
      maxPrice: 100_000,
    }
    print(`\nPOST /v1/jobs  ${JSON.stringify(spec)}`)
    const { id } = await api.ok<{ id: string }>('POST', '/v1/jobs', spec)
    print(`job ${id}`)
    let t0: number | undefined
    const job = await follow(api, id, (h) =>
      print(`  ${String(h.at - (t0 ??= h.at)).padStart(6)} ms  ${h.state}`),
    )

    print('\nThe journey (amounts in micro-tokens)')
    for (const b of job.bids)
      print(`  bid from ${names[b.provider] ?? short(b.provider)}: ${b.pricePerHour}/hour, total ${b.total}`)
    for (const d of job.declines)
      print(`  decline from ${names[d.provider] ?? short(d.provider)}: ${d.reasons.join('; ')}`)
    if (job.winner) print(`  winner: ${names[job.winner.provider]} (${job.winner.why})`)
    if (job.contract && job.proof) {
      const t = job.contract.terms
      const { signature, ...proofBody } = job.proof
      print(
        `  contract ${t.contractId}: escrow ${t.escrow}, ${t.pricePerHour}/hour, max ${t.maxDurationSeconds}s`,
      )
      print(
        `    requester signature ${ok(verifyDoc(keyFromString(t.requester.publicKey), DOMAIN.contract, t, job.contract.requesterSignature))}`,
      )
      print(
        `    provider signature  ${ok(verifyDoc(keyFromString(t.provider.publicKey), DOMAIN.contract, t, job.contract.providerSignature ?? ''))}`,
      )
      print(
        `    contract-db proof   ${ok(verifyDoc(publicKeyOfPeer(cdb.peerId)!, DOMAIN.proof, proofBody, signature))}`,
      )
    }
    if (job.result) {
      const r = job.result.receipt.receipt
      print(
        `  allocation ${r.allocationId}: ${r.status}, exit code ${r.exitCode}, ${r.usage.wallSeconds.toFixed(2)}s wall`,
      )
      print(`    stdout: ${job.result.stdout.trim()}`)
      for (const f of job.result.outputs) {
        const file = await api.raw('GET', `/v1/jobs/${job.id}/outputs/${f.path}`)
        const shown =
          file.status === 200 ? JSON.stringify(file.body.toString()) : `(not fetched: ${file.status})`
        print(`    output ${f.path}: ${shown} sha256 ${f.sha256.slice(0, 16)}…`)
      }
      if (job.result.archive)
        print(
          `    outputs archive ${job.result.archive.sha256.slice(0, 16)}… (${job.result.archive.size} bytes), fetched from the provider`,
        )
    }
    if (job.verification)
      print(
        `  verification: outputs hash ${ok(job.verification.outputsHashOk)}, receipt signature ${ok(job.verification.receiptSignatureOk)}`,
      )
    if (job.settlement) {
      const s = job.settlement
      print(
        `  settlement: paid ${s.paidToProvider} to ${names[job.winner!.provider]} for ${s.billedSeconds.toFixed(2)}s, refunded ${s.refundedToRequester}`,
      )
      const { signature: sSig, ...sBody } = s
      print(
        `    contract-db settlement signature ${ok(verifyDoc(publicKeyOfPeer(cdb.peerId)!, DOMAIN.settlement, sBody, sSig))}`,
      )
      const cdbApi = new ApiClient(cdb.socket)
      for (const peer of [req.peerId, job.winner!.provider]) {
        const acc = await cdbApi.ok<{ balance: number; escrow: number }>(
          'GET',
          `/v1/contract-db/accounts/${peer}`,
        )
        print(`    balance of ${names[peer]}: ${acc.balance} (in escrow ${acc.escrow})`)
      }
      print(`\n$ dms contract-db contracts --data-dir ${dirs.cdb}`)
      print((await operator('contracts')).stdout.trimEnd())
    }
    print(`\njob ${id}: ${job.state}${job.error ? ` (${job.error.code}: ${job.error.message})` : ''}`)
    if (job.state !== 'completed') throw new CliError(`demo job ended ${job.state}; logs in ${root}`, 2)
  } finally {
    for (const p of procs.reverse()) await stopProcess(p)
    if (!opts.keep) await rm(root, { recursive: true, force: true })
  }
}
