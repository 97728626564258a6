/**
 * Property test of the contract-db: random sequences of credit / verify / settle / terminate /
 * claim / start note / expiry (and restarts), run in concurrent batches with duplicates, forgeries,
 * strangers, expired contracts and contracts with a start deadline. After every batch:
 *  - the total of all balances plus escrow equals everything ever credited (money is conserved);
 *  - each account's escrow is exactly the escrow of its active contracts; nothing is negative;
 *  - no contract closed (settled or terminated) more than once, and its stored settlement is the
 *    one that was returned;
 *  - every refusal is one the request deserved.
 * Deterministic: a seeded generator. A failure prints the seed; rerun it with
 * DMS_PROPERTY_SEED=<seed> DMS_PROPERTY_RUNS=1.
 *
 * It runs over each backend of the store (specs/contract-db.md, "Storage backends"): level, and
 * PostgreSQL on a throwaway cluster; and with two instances over the same books, each operation
 * sent to one of them and the duplicate of a close to the other, so that they race (the books
 * decide: no double close, money conserved). Two instances over level run a third of the seeds;
 * PostgreSQL runs DMS_PROPERTY_PG_RUNS seeds (default 3: each costs a second or more).
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ManualClock } from '../../../actors/clock.js'
import { signDoc } from '../../../dms/contracts/canonical.js'
import { DOMAIN, type Settlement, type SignedContract } from '../../../dms/contracts/model.js'
import { ContractDbService } from '../../../dms/contract-db/service.js'
import { signStartNote } from '../../../dms/contracts/start.js'
import { silentLogger } from '../../../dms/log.js'
import { LevelContractDbStore } from '../../../dms/contract-db/store/level.js'
import type { ContractDbStore } from '../../../dms/contract-db/store/port.js'
import { PostgresContractDbStore } from '../../../dms/contract-db/store/postgres.js'
import { openDb } from '../../../dms/store/db.js'
import { makeContract, makeReceipt, makeSettle, newParty, type Who } from '../../helpers/contracts.js'
import { startPeer, type TestPeer } from '../../helpers/peers.js'
import { startPostgres, type TestPostgres } from '../../helpers/postgres.js'
import { freshDatabase } from '../../helpers/postgres-db.js'
import { prng } from '../../helpers/prng.js'

const BASE_SEED = Number(process.env.DMS_PROPERTY_SEED ?? 20_261_121)
const RUNS = Number(process.env.DMS_PROPERTY_RUNS ?? 30)
const PG_RUNS = Number(process.env.DMS_PROPERTY_PG_RUNS ?? process.env.DMS_PROPERTY_RUNS ?? 3)
const BATCHES = 40
const START0 = { started: 0, notStarted: 0 }

/** What a run exercised (the generator must reach every path). */
interface RunStats {
  ops: number
  ok: number
  refused: number
  closes: number
  claimed: number
  expired: number
  disputed: number
  started: number
  notStarted: number
}

/** A seeded PRNG (mulberry32) with the draws the schedule needs. */
function rng(seed: number) {
  const next = prng(seed)
  return {
    next,
    int: (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1)),
    pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)],
    chance: (p: number) => next() < p,
  }
}

interface Known {
  c: SignedContract
  req: Who
  prov: Who
  /** Verified (escrow locked) in an earlier batch. */
  accepted: boolean
  /** Claimed by its provider in an earlier batch (its requester disputes more often). */
  claimed?: boolean
}

type Op = {
  label: string
  /** Which instance it is sent to. */
  on: number
  run: (svc: ContractDbService) => Promise<unknown>
  allowed: string[]
  contractId?: string
  closes?: boolean
}

/** One run's books: the stores of its instances over them, reopened at a restart. */
interface Books {
  stores: ContractDbStore[]
  /** Closes the stores (a restart, or the run's end). */
  close(): Promise<void>
}

/** Opens the books of run `name` for `instances` instances (the same books again after a close). */
type OpenBooks = (name: string, instances: number) => Promise<Books>

/** Level: one database per run, one store over it shared by the instances (each has its own queue). */
function levelBooks(root: () => string): OpenBooks {
  return async (name) => {
    const db = await openDb(join(root(), name))
    const store = new LevelContractDbStore(db)
    return { stores: [store, store], close: () => db.close() }
  }
}

/** PostgreSQL: one schema per run, a store (its own connections) per instance. */
function postgresBooks(cluster: () => TestPostgres): OpenBooks {
  const urls = new Map<string, string>()
  return async (name, instances) => {
    let url = urls.get(name)
    if (url === undefined) urls.set(name, (url = (await freshDatabase(cluster())).url))
    const stores = Array.from({ length: instances }, () => new PostgresContractDbStore({ url }))
    return {
      stores,
      close: async () => {
        for (const s of stores) await s.close()
      },
    }
  }
}

describe('contract-db property: money is conserved and no contract closes twice', function () {
  this.timeout(300_000)
  let peer: TestPeer
  let root: string
  let cluster: TestPostgres | undefined

  before(async () => {
    peer = await startPeer()
    root = await mkdtemp(join(tmpdir(), 'dms-cdb-prop-'))
  })
  after(async () => {
    await peer.stop()
    await cluster?.stop()
    await rm(root, { recursive: true, force: true })
  })

  property(
    'level',
    RUNS,
    1,
    levelBooks(() => root),
  )
  property(
    'level, two instances over one store',
    Math.ceil(RUNS / 3),
    2,
    levelBooks(() => root),
  )

  describe('over PostgreSQL', () => {
    before(async function () {
      cluster = await startPostgres()
      if (cluster === undefined) this.skip()
    })
    const books = postgresBooks(() => cluster!)
    property('postgres', PG_RUNS, 1, books)
    property('postgres, two racing instances', PG_RUNS, 2, books)
  })

  function property(name: string, runs: number, instances: number, books: OpenBooks) {
    it(`${name}: holds over ${runs} seeded runs of ${BATCHES} concurrent batches`, async () => {
      await holds(runs, (seed) => runOnce(seed, `${name}-${seed}`, instances, books))
    })
  }

  async function holds(RUNS: number, runOnce: (seed: number) => Promise<RunStats>) {
    let stats = { ops: 0, ok: 0, refused: 0, closes: 0, claimed: 0, expired: 0, disputed: 0, ...START0 }
    for (let i = 0; i < RUNS; i++) {
      const seed = BASE_SEED + i
      try {
        const s = await runOnce(seed)
        stats = {
          ops: stats.ops + s.ops,
          ok: stats.ok + s.ok,
          refused: stats.refused + s.refused,
          closes: stats.closes + s.closes,
          claimed: stats.claimed + s.claimed,
          expired: stats.expired + s.expired,
          disputed: stats.disputed + s.disputed,
          started: stats.started + s.started,
          notStarted: stats.notStarted + s.notStarted,
        }
      } catch (err) {
        throw new Error(
          `property failed with seed ${seed} (rerun: DMS_PROPERTY_SEED=${seed} DMS_PROPERTY_RUNS=1): ${(err as Error).message}`,
          { cause: err },
        )
      }
    }
    // The generator must exercise both sides: plenty accepted, plenty refused, many closes.
    assert.ok(
      stats.ok > RUNS * 20 && stats.refused > RUNS * 10 && stats.closes > RUNS * 5,
      JSON.stringify(stats),
    )
    // ...and the deadlines: claims, disputes of them, expiry, start notes and expiry at startBy.
    assert.ok(
      RUNS < 10 ||
        (stats.claimed > 0 &&
          stats.expired > 0 &&
          stats.disputed > 0 &&
          stats.started > 0 &&
          stats.notStarted > 0),
      JSON.stringify(stats),
    )
  }

  async function runOnce(seed: number, name: string, instances: number, openBooks: OpenBooks) {
    const r = rng(seed)
    const clock = new ManualClock(Date.now())
    let books = await openBooks(name, instances)
    // Short deadlines, so that claims, disputes and expiry happen within a run's clock.
    const open = () =>
      books.stores
        .slice(0, instances)
        .map(
          (store) =>
            new ContractDbService(
              { system: peer.system, key: peer.key, db: undefined as never, store, clock, log: silentLogger },
              { deadlines: { settleGraceMs: 1000, claimWindowMs: 60_000, disputeWindowMs: 120_000 } },
            ),
        )
    let services = open()
    for (const s of services) await s.openBooks()
    const svc0 = () => services[0]
    const cdb = peer.system.peerId
    const approved = [newParty(), newParty(), newParty()]
    const stranger = newParty() // never approved
    const everyone = [...approved, stranger]
    for (const p of approved) await svc0().approve(p.peer)
    let credited = 0
    const known: Known[] = []
    const closes = new Map<string, Settlement[]>()
    const stats = { ops: 0, ok: 0, refused: 0, closes: 0, claimed: 0, expired: 0, disputed: 0, ...START0 }

    const genOp = (): Op => {
      // One instance: no draw, so that its seeds keep their schedules.
      const on = instances === 1 ? 0 : r.int(0, instances - 1)
      const roll = r.next()
      if (roll < 0.2) {
        const who = r.pick(everyone)
        const amount = r.int(1, 400)
        return {
          on,
          label: `credit ${amount}`,
          allowed: ['ok'],
          run: async (svc) => {
            const acc = await svc.credit(who.peer, amount)
            credited += amount
            return acc
          },
        }
      }
      if (roll < 0.5 || known.length === 0) {
        const party = (not?: Who) => (r.chance(0.1) ? stranger : r.pick(approved.filter((p) => p !== not)))
        const req = party()
        const prov = party(req)
        const forged = r.chance(0.1)
        const expired = r.chance(0.1)
        const c = makeContract(req, prov, cdb, {
          now: clock.now(),
          pricePerHour: r.pick([0, 360, 3600, 36_000]),
          maxDurationSeconds: r.int(1, 60),
          minJobPrice: r.pick([0, 0, 5]),
          expiresAt: expired ? clock.now() - 1 : clock.now() + 60_000,
          // Some carry a start deadline: no start note by then, the contract expires.
          ...(r.chance(0.3) ? { startBy: clock.now() + r.int(1, 60) * 1000 } : {}),
        })
        if (forged) c.requesterSignature = signDoc(prov.key, DOMAIN.contract, c.terms)
        known.push({ c, req, prov, accepted: false })
        const allowed =
          req === stranger || prov === stranger
            ? ['PARTY_NOT_APPROVED']
            : forged
              ? ['BAD_SIGNATURE']
              : expired
                ? ['CONTRACT_EXPIRED']
                : c.terms.escrow === 0
                  ? ['ok', 'TOO_MANY_CONTRACTS']
                  : ['ok', 'INSUFFICIENT_FUNDS']
        return {
          on,
          label: `verify ${c.terms.escrow}`,
          allowed,
          contractId: c.terms.contractId,
          run: (svc) => svc.verify(req.peer, c),
        }
      }
      // Claimed contracts are few among many: picked more often, so their disputes are exercised.
      const claimed = known.filter((x) => x.claimed === true)
      const k = claimed.length > 0 && r.chance(0.1) ? r.pick(claimed) : r.pick(known)
      const id = k.c.terms.contractId
      if (roll < 0.6) {
        // A replayed submission of an earlier contract.
        return {
          on,
          label: 'verify again',
          // Its requester's resend of a stored contract: the stored proof while active.
          allowed: k.accepted
            ? ['ok', 'CONTRACT_EXISTS']
            : [
                'TOO_MANY_CONTRACTS',
                'ok',
                'INSUFFICIENT_FUNDS',
                'PARTY_NOT_APPROVED',
                'BAD_SIGNATURE',
                'CONTRACT_EXPIRED',
                'CONTRACT_EXISTS',
                'START_DEADLINE_PASSED',
              ],
          contractId: id,
          run: (svc) => svc.verify(k.req.peer, k.c),
        }
      }
      const who = r.pick([
        k.req,
        k.req,
        k.prov,
        k.prov,
        r.pick(everyone.filter((p) => p !== k.req && p !== k.prov)),
      ])
      const third = who !== k.req && who !== k.prov
      const base = k.accepted
        ? third
          ? ['NOT_A_PARTY']
          : ['ok', 'CONTRACT_NOT_ACTIVE', 'DISPUTE_WINDOW_CLOSED']
        : ['UNKNOWN_CONTRACT', 'NOT_A_PARTY', 'ok', 'CONTRACT_NOT_ACTIVE', 'DISPUTE_WINDOW_CLOSED']
      if (roll < 0.78) {
        const forged = r.chance(0.1)
        const req = makeSettle(k.c, k.req, k.prov, {
          wallSeconds: r.int(0, 150_000) / 1000,
          status: r.pick(['completed', 'failed', 'timed_out', 'cancelled'] as const),
          exitCode: r.pick([0, 1, 137, -1]),
          verified: r.chance(k.claimed === true ? 0.5 : 0.85),
        })
        if (forged) req.receipt = makeReceipt(k.c, k.req) // not the provider's signature
        const allowed = forged ? base.map((c) => (c === 'ok' ? 'BAD_SIGNATURE' : c)) : base
        return {
          on,
          label: `settle by ${third ? 'stranger' : who === k.req ? 'requester' : 'provider'}`,
          allowed,
          contractId: id,
          closes: true,
          run: (svc) => svc.settle(who.peer, req),
        }
      }
      if (roll < 0.9) {
        // The provider's claim past settleBy (too early is refused), or someone else trying it.
        const receipt = makeReceipt(k.c, k.prov, { wallSeconds: r.int(0, 150_000) / 1000 })
        const allowed = k.accepted
          ? third
            ? ['NOT_A_PARTY']
            : who === k.prov
              ? ['ok', 'CONTRACT_NOT_ACTIVE', 'CLAIM_TOO_EARLY']
              : ['BAD_REASON', 'CONTRACT_NOT_ACTIVE', 'CLAIM_TOO_EARLY']
          : [...base, 'BAD_REASON', 'CLAIM_TOO_EARLY']
        return {
          on,
          label: `claim by ${third ? 'stranger' : who === k.req ? 'requester' : 'provider'}`,
          allowed,
          contractId: id,
          closes: true,
          run: (svc) => svc.terminate(who.peer, { contractId: id, reason: 'REQUESTER_SILENT', receipt }),
        }
      }
      if (roll < 0.92) {
        // The provider's start note (anyone else's is refused); past startBy it expires the contract.
        const note = signStartNote(who.key, who.peer, id, clock.now())
        const allowed = k.accepted
          ? who === k.prov
            ? ['ok', 'START_DEADLINE_PASSED', 'CONTRACT_NOT_ACTIVE']
            : ['NOT_A_PARTY']
          : ['UNKNOWN_CONTRACT', 'NOT_A_PARTY', 'ok', 'START_DEADLINE_PASSED', 'CONTRACT_NOT_ACTIVE']
        return {
          on,
          label: `start note by ${third ? 'stranger' : who === k.req ? 'requester' : 'provider'}`,
          allowed,
          contractId: id,
          run: (svc) => svc.started(who.peer, note),
        }
      }
      if (roll < 0.945) {
        return {
          on,
          label: 'expire due',
          allowed: ['ok'],
          run: async (svc) => {
            for (const rec of await svc.expireDue()) {
              const cid = rec.contract.terms.contractId
              closes.set(cid, [...(closes.get(cid) ?? []), rec.settlement!])
              stats.closes++
            }
          },
        }
      }
      if (roll < 0.97) {
        const reason = r.pick(['PROVIDER_FAULT', 'REQUESTER_CANCELLED'] as const)
        const badReason = reason === 'REQUESTER_CANCELLED' && who === k.prov
        const allowed = badReason ? base.map((c) => (c === 'ok' ? 'BAD_REASON' : c)) : base
        return {
          on,
          label: `terminate ${reason}`,
          allowed,
          contractId: id,
          closes: true,
          run: (svc) => svc.terminate(who.peer, { contractId: id, reason }),
        }
      }
      return {
        on,
        label: 'restart',
        allowed: ['ok'],
        run: async () => {
          for (const s of services) s.stop()
          await books.close()
          books = await openBooks(name, instances)
          services = open()
        },
      }
    }

    const trace: string[] = []
    for (let b = 0; b < BATCHES; b++) {
      clock.advance(r.int(0, 12_000))
      let batch = Array.from({ length: r.int(1, 5) }, genOp)
      // A restart runs alone; a duplicate of a close runs beside it.
      if (batch.some((o) => o.label === 'restart'))
        batch = batch.filter((o) => o.label === 'restart').slice(0, 1)
      else if (r.chance(0.3)) {
        const close = batch.find((o) => o.closes)
        // Sent to the other instance, where there are two: they race on the same contract.
        if (close !== undefined)
          batch.push({ ...close, on: (close.on + 1) % instances, label: `${close.label} (duplicate)` })
      }
      const results = await Promise.allSettled(batch.map((o) => o.run(services[o.on])))
      for (const [i, res] of results.entries()) {
        const op = batch[i]
        const outcome =
          res.status === 'fulfilled' ? 'ok' : ((res.reason as { code?: string }).code ?? String(res.reason))
        trace.push(`${b}: ${op.label}${instances > 1 ? ` @${op.on}` : ''} -> ${outcome}`)
        stats.ops++
        if (outcome === 'ok') stats.ok++
        else stats.refused++
        assert.ok(
          op.allowed.includes(outcome),
          `${op.label}: got ${outcome}, allowed ${op.allowed.join('|')}\n${trace.slice(-12).join('\n')}`,
        )
        // A late start note expires the contract: its refusal carries the settlement.
        const kept = (res as { reason?: { data?: { settlement?: Settlement } } }).reason?.data?.settlement
        if (outcome === 'START_DEADLINE_PASSED' && kept !== undefined) {
          closes.set(op.contractId!, [...(closes.get(op.contractId!) ?? []), kept])
          stats.closes++
        }
        if (outcome === 'ok' && op.closes) {
          const list = closes.get(op.contractId!) ?? []
          list.push(res.status === 'fulfilled' ? (res.value as Settlement) : (undefined as never))
          closes.set(op.contractId!, list)
          stats.closes++
        }
      }
      // What was verified in this batch is known to be accepted from now on.
      for (const k of known) {
        const rec = await svc0().contract(k.c.terms.contractId)
        if (rec !== undefined) k.accepted = true
        if (rec?.state === 'claimed') k.claimed = true
      }
      for (const s of services) await checkInvariants(s, credited, closes, trace)
    }
    for (const rec of await svc0().listContracts()) {
      if (rec.state === 'claimed') stats.claimed++
      if (rec.state === 'expired') stats.expired++
      if (rec.dispute !== undefined) stats.disputed++
      if (rec.started !== undefined) stats.started++
      if (rec.state === 'expired' && rec.detail === 'not started by startBy') stats.notStarted++
    }
    for (const s of services) s.stop()
    await books.close()
    return stats
  }
})

async function checkInvariants(
  svc: ContractDbService,
  credited: number,
  closes: Map<string, Settlement[]>,
  trace: string[],
): Promise<void> {
  const where = `\n${trace.slice(-12).join('\n')}`
  const accounts = await svc.listAccounts()
  const contracts = await svc.listContracts()
  let total = 0
  const lockedBy = new Map<string, number>()
  for (const rec of contracts) {
    const t = rec.contract.terms
    if (rec.state === 'active')
      lockedBy.set(t.requester.peer, (lockedBy.get(t.requester.peer) ?? 0) + t.escrow)
    else {
      const s = rec.settlement!
      assert.equal(
        s.paidToProvider + s.refundedToRequester,
        t.escrow,
        `closed contract splits its escrow${where}`,
      )
      assert.ok(s.paidToProvider >= 0 && s.refundedToRequester >= 0)
    }
    // The same settlement answered again (a replay, a claim read back, a dispute) is one close.
    const returned = [...new Map((closes.get(t.contractId) ?? []).map((s) => [s.signature, s])).values()]
    assert.ok(returned.length <= 1, `contract ${t.contractId} closed ${returned.length} times${where}`)
    if (returned.length === 1)
      assert.deepEqual(rec.settlement, returned[0], `stored settlement is the one returned${where}`)
    else assert.equal(rec.state, 'active', `a contract closed without a returned settlement${where}`)
  }
  for (const a of accounts) {
    assert.ok(Number.isSafeInteger(a.balance) && a.balance >= 0, `balance ${a.balance}${where}`)
    assert.ok(Number.isSafeInteger(a.escrow) && a.escrow >= 0, `escrow ${a.escrow}${where}`)
    assert.equal(
      a.escrow,
      lockedBy.get(a.peer) ?? 0,
      `escrow of ${a.peer} equals its active contracts${where}`,
    )
    total += a.balance + a.escrow
  }
  assert.equal(total, credited, `balances + escrow = everything credited${where}`)
  // The contract-db's own check agrees: its stored credited total is the test's count.
  const check = await svc.conservation()
  assert.deepEqual([check.ok, check.credited], [true, credited], `the conservation check${where}`)
}
