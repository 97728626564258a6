/**
 * Contract-db throughput and latency: verify (escrow lock) and settle, called in-process and over
 * libp2p on 127.0.0.1 from a requester peer, one at a time and all at once (the service's queue
 * serialises them). Real level db in a temp dir.
 *
 *   node --import tsx --import ./actors/polyfill.ts scripts/bench-contract-db.ts   # env: BENCH_N (default 500)
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ContractDbNode } from '../dms/contract-db/node.js'
import { publicKeyOfPeer } from '../dms/contracts/party.js'
import { W } from '../dms/protocol/behaviours.js'
import { INBOX } from '../dms/protocol/handles.js'
import { makeContract, makeSettle, newParty, type Who } from '../test/helpers/contracts.js'
import { startPeer } from '../test/helpers/peers.js'

const N = Number(process.env.BENCH_N ?? 500)
const root = await mkdtemp(join(tmpdir(), 'dms-bench-cdb-'))
// A throwaway key in a temp dir: its passphrase is the bench's own (no DMS_PASSPHRASE needed).
const node = new ContractDbNode(
  { dataDir: join(root, 'cdb'), oneHost: true, socket: false },
  { passphrase: () => Promise.resolve('bench') },
)
await node.start()
const svc = node.service
const requesterPeer = await startPeer(node.addrs())
const req: Who = { key: requesterPeer.key, peer: requesterPeer.system.peerId }
const prov = newParty()
await svc.approve(req.peer)
await svc.approve(prov.peer)
await svc.credit(req.peer, 1e12)
const actor = requesterPeer.system.spawn('bench', requesterPeer.key)
const to = {
  publicKey: publicKeyOfPeer(node.peerId)!,
  peer: node.peerId,
  inbox: INBOX.contractDb,
  addrs: node.addrs(),
} as never

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]
const rows: string[][] = []
async function measure(name: string, run: (i: number) => Promise<unknown>, parallel: boolean) {
  const lat: number[] = []
  const t0 = performance.now()
  const one = async (i: number) => {
    const s = performance.now()
    await run(i)
    lat.push(performance.now() - s)
  }
  if (parallel) await Promise.all(Array.from({ length: N }, (_, i) => one(i)))
  else for (let i = 0; i < N; i++) await one(i)
  const total = performance.now() - t0
  rows.push([
    name,
    parallel ? 'all at once' : 'sequential',
    String(N),
    (N / (total / 1000)).toFixed(0),
    pct(lat, 0.5).toFixed(2),
    pct(lat, 0.99).toFixed(2),
  ])
}

for (const [where, verify, settle] of [
  [
    'in-process',
    (c: ReturnType<typeof makeContract>) => svc.verify(req.peer, c),
    (c: ReturnType<typeof makeContract>) => svc.settle(req.peer, makeSettle(c, req, prov)),
  ],
  [
    'libp2p',
    (c: ReturnType<typeof makeContract>) =>
      actor.request(to, W.contractVerify, { contract: c }, { timeoutMs: 60_000 }),
    (c: ReturnType<typeof makeContract>) =>
      actor.request(to, W.settle, makeSettle(c, req, prov), { timeoutMs: 60_000 }),
  ],
] as const) {
  for (const parallel of [false, true]) {
    const contracts = Array.from({ length: N }, () => makeContract(req, prov, node.peerId))
    await measure(`${where} verify`, (i) => verify(contracts[i]), parallel)
    await measure(`${where} settle`, (i) => settle(contracts[i]), parallel)
  }
}

const head = ['operation', 'mode', 'n', 'ops/s', 'p50 ms', 'p99 ms']
const width = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)))
for (const r of [head, ...rows]) console.log(r.map((c, i) => c.padEnd(width[i])).join('  '))
const accounts = await svc.listAccounts()
console.log(
  `\nconservation: balances + escrow = ${accounts.reduce((a, x) => a + x.balance + x.escrow, 0)} (credited 1000000000000)`,
)
actor.stop()
await requesterPeer.stop()
await node.stop()
await rm(root, { recursive: true, force: true })
