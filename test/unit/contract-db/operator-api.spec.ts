/**
 * The operator API over fake ports (no node, no database): each route answers from the port it
 * names, refusals become 400 with their code, and the socket is the operator's alone.
 */
import assert from 'node:assert/strict'
import { request } from 'node:http'
import { mkdtemp, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { RefusedError } from '../../../actors/errors.js'
import { ApiClient } from '../../../dms/api/client.js'
import { OperatorApi, type OperatorPorts } from '../../../dms/contract-db/operator-api.js'
import type { Account, ApprovedEntity, ContractRecord } from '../../../dms/contract-db/records.js'
import { InvalidAmountError } from '../../../dms/contracts/money.js'
import { silentLogger } from '../../../dms/log.js'
import { makeContract, newParty } from '../../helpers/contracts.js'

describe('contract-db/operator-api (from ports)', () => {
  let dir: string
  let api: OperatorApi
  let client: ApiClient
  const calls: string[] = []
  const approved: ApprovedEntity[] = [{ peer: 'p1', approvedAt: 5 }]
  const accounts = new Map<string, Account>([['p1', { peer: 'p1', balance: 10, escrow: 2 }]])
  const req = newParty()
  const prov = newParty()
  const record = (state: ContractRecord['state'], at = 7): ContractRecord => {
    const contract = makeContract(req, prov, 'cdb', { pricePerHour: 3600, maxDurationSeconds: 60 })
    const proof = { ...contract.terms, termsHash: 'h', escrowLocked: 60, issuedAt: 7, signature: 's' }
    return { contract, state, proof, activatedAt: at, history: [{ state, at }] }
  }
  const contracts = [record('active', 7), record('active', 9), record('settled', 8)]

  const ports: OperatorPorts = {
    approvals: {
      list: () => Promise.resolve(approved),
      approve: (peer, roles) => {
        calls.push(`approve ${peer}${roles === undefined ? '' : ` ${roles.join(',')}`}`)
        if (peer === 'bad') return Promise.reject(new RefusedError('BAD_PEER_ID', 'bad is not a peer id'))
        return Promise.resolve({ peer, approvedAt: 9 })
      },
      revoke: (peer) => Promise.resolve(peer === 'p1'),
    },
    accounts: {
      list: () => Promise.resolve([...accounts.values()]),
      get: (peer) => Promise.resolve(accounts.get(peer) ?? { peer, balance: 0, escrow: 0 }),
      credit: (peer, amount) => {
        calls.push(`credit ${peer} ${String(amount)}`)
        if (typeof amount !== 'number') return Promise.reject(new InvalidAmountError('a credit', amount))
        return Promise.resolve({ peer, balance: amount, escrow: 0 })
      },
    },
    contracts: {
      // Newest first, cut at the limit; the query is recorded to check what the API passed on.
      page: (q) => {
        calls.push(`page ${JSON.stringify(q)}`)
        const all = contracts
          .filter((c) => q.state === undefined || c.state === q.state)
          .sort((a, b) => b.activatedAt - a.activatedAt)
        const last = all[q.limit - 1]
        return Promise.resolve({
          contracts: all.slice(0, q.limit),
          ...(all.length > q.limit
            ? { next: { activatedAt: last.activatedAt, id: last.contract.terms.contractId } }
            : {}),
        })
      },
      counts: () => {
        const by: Record<string, number> = {}
        for (const c of contracts) by[c.state] = (by[c.state] ?? 0) + 1
        return Promise.resolve(by)
      },
      get: (id) => {
        if (id === 'boom') return Promise.reject(new Error('disk on fire'))
        return Promise.resolve(contracts.find((c) => c.contract.terms.contractId === id))
      },
    },
    identity: {
      peerId: () => 'cdb-peer',
      addrs: () => ['/ip4/127.0.0.1/tcp/1/p2p/cdb-peer'],
      backend: () => 'level',
      instance: () => 'cdb-1',
    },
    metrics: {
      rejections: () => ({ bad_signature: 3 }),
      contentType: 'text/plain; version=0.0.4; charset=utf-8',
      render: () => Promise.resolve('dms_contract_db_contracts{state="active"} 1\n'),
    },
    log: silentLogger,
  }

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dms-cdb-api-'))
    api = new OperatorApi(ports, { socketPath: join(dir, 'cdb.sock') })
    await api.start()
    client = new ApiClient(api.socketPath)
  })
  after(async () => {
    await api.stop()
    await rm(dir, { recursive: true, force: true })
  })

  it('without a web listener there is no dashboard link: DASHBOARD_OFF', async () => {
    const r = await client.call<{ error: { code: string } }>('POST', '/v1/dashboard/login')
    assert.equal(r.status, 409)
    assert.equal(r.body.error.code, 'DASHBOARD_OFF')
  })

  it("GET /metrics: the metrics port's Prometheus text, with its content type", async () => {
    const res = await new Promise<{ type?: string; body: string }>((resolve, reject) => {
      const req = request({ socketPath: api.socketPath, path: '/metrics' }, (r) => {
        let body = ''
        r.on('data', (c: Buffer) => (body += c.toString()))
        r.on('end', () => resolve({ type: r.headers['content-type'], body }))
      })
      req.on('error', reject)
      req.end()
    })
    assert.equal(res.type, 'text/plain; version=0.0.4; charset=utf-8')
    assert.equal(res.body, 'dms_contract_db_contracts{state="active"} 1\n')
  })

  it('listens on a socket only its owner may use', async () => {
    assert.equal((await stat(api.socketPath)).mode & 0o777, 0o600)
  })

  it('/v1/info: identity, the store backend, approvals, contracts by state and the rejection counters', async () => {
    const { status, body } = await client.call('GET', '/v1/info')
    assert.equal(status, 200)
    assert.deepEqual(body, {
      role: 'contract-db',
      peerId: 'cdb-peer',
      addrs: ['/ip4/127.0.0.1/tcp/1/p2p/cdb-peer'],
      backend: 'level',
      instance: 'cdb-1',
      approved: 1,
      contracts: { active: 2, settled: 1 },
      rejections: { bad_signature: 3 },
    })
  })

  it('approvals: list, approve, revoke; a refusal is a 400 with its code', async () => {
    assert.deepEqual((await client.call('GET', '/v1/contract-db/approved')).body, { approved })
    assert.deepEqual((await client.call('PUT', '/v1/contract-db/approved/p2')).body, {
      peer: 'p2',
      approvedAt: 9,
    })
    assert.deepEqual((await client.call('DELETE', '/v1/contract-db/approved/p1')).body, {
      peer: 'p1',
      revoked: true,
    })
    const bad = await client.call<{ error: { code: string } }>('PUT', '/v1/contract-db/approved/bad')
    assert.equal(bad.status, 400)
    assert.equal(bad.body.error.code, 'BAD_PEER_ID')
  })

  it('approve passes the roles of its body on; a body that is no list of names is BAD_ROLE', async () => {
    calls.length = 0
    await client.call('PUT', '/v1/contract-db/approved/p3', { roles: ['provider', 'relay'] })
    assert.deepEqual(calls, ['approve p3 provider,relay'])
    for (const roles of ['provider', [1], Array(9).fill('relay')]) {
      const r = await client.call<{ error: { code: string } }>('PUT', '/v1/contract-db/approved/p4', {
        roles,
      })
      assert.deepEqual([r.status, r.body.error.code], [400, 'BAD_ROLE'])
    }
    assert.deepEqual(calls, ['approve p3 provider,relay'])
  })

  it('accounts: one (zeros when unknown), all, and a credit checked by the port', async () => {
    assert.deepEqual((await client.call('GET', '/v1/contract-db/accounts/p9')).body, {
      peer: 'p9',
      balance: 0,
      escrow: 0,
    })
    assert.deepEqual((await client.call('GET', '/v1/contract-db/accounts')).body, {
      accounts: [...accounts.values()],
    })
    const ok = await client.call('POST', '/v1/contract-db/accounts/p1/credit', { amount: 40 })
    assert.deepEqual(ok.body, { peer: 'p1', balance: 40, escrow: 0 })
    const bad = await client.call<{ error: { code: string } }>(
      'POST',
      '/v1/contract-db/accounts/p1/credit',
      {},
    )
    assert.equal(bad.status, 400)
    assert.equal(bad.body.error.code, 'INVALID_AMOUNT')
    assert.deepEqual(calls.slice(-2), ['credit p1 40', 'credit p1 undefined'])
  })

  it('contracts: summaries newest first, one record, 404 for an unknown id, 500 INTERNAL for a failing port', async () => {
    const list = await client.call<{
      contracts: Array<{ contractId: string; state: string; escrow: number; maxDurationSeconds: number }>
    }>('GET', '/v1/contract-db/contracts')
    // The max duration is the embedded bid's: the terms copy none of it.
    assert.ok(!('maxDurationSeconds' in contracts[0].contract.terms))
    assert.deepEqual(
      list.body.contracts.map((c) => [c.contractId, c.state, c.escrow, c.maxDurationSeconds]),
      [contracts[1], contracts[2], contracts[0]].map((c) => [c.contract.terms.contractId, c.state, 60, 60]),
    )
    const id = contracts[2].contract.terms.contractId
    assert.deepEqual((await client.call('GET', `/v1/contract-db/contracts/${id}`)).body, contracts[2])
    const unknown = await client.call<{ error: { code: string } }>('GET', '/v1/contract-db/contracts/nope')
    assert.equal(unknown.status, 404)
    assert.equal(unknown.body.error.code, 'UNKNOWN_CONTRACT')
    const failing = await client.call<{ error: { code: string } }>('GET', '/v1/contract-db/contracts/boom')
    assert.equal(failing.status, 500)
    assert.equal(failing.body.error.code, 'INTERNAL')
    assert.equal((await client.call('GET', '/v1/nothing')).status, 404)
  })

  it('contracts: pages by limit and cursor, passed on checked; the next cursor when more remain', async () => {
    calls.length = 0
    const first = await client.call<{ contracts: Array<{ contractId: string }>; next?: string }>(
      'GET',
      '/v1/contract-db/contracts?limit=2',
    )
    assert.equal(first.status, 200)
    assert.equal(first.body.contracts.length, 2)
    const second = contracts[2].contract.terms.contractId
    assert.equal(first.body.next, `8:${second}`)
    await client.call('GET', `/v1/contract-db/contracts?limit=5&state=settled&cursor=${first.body.next}`)
    assert.deepEqual(calls, [
      'page {"limit":2}',
      `page ${JSON.stringify({ limit: 5, state: 'settled', after: { activatedAt: 8, id: second } })}`,
    ])
    const all = await client.call<{ next?: string }>('GET', '/v1/contract-db/contracts')
    assert.equal(all.body.next, undefined, 'the last page has no next')
    assert.equal(calls.at(-1), 'page {"limit":100}', 'the default page')
  })

  it('contracts: an absurd limit, a forged cursor or an unknown state is a 400 with its code, and nothing is read', async () => {
    calls.length = 0
    const bad: Array<[string, string]> = [
      ['limit=0', 'BAD_LIMIT'],
      ['limit=1001', 'BAD_LIMIT'],
      ['limit=99999999999999999999', 'BAD_LIMIT'],
      ['limit=-1', 'BAD_LIMIT'],
      ['limit=1.5', 'BAD_LIMIT'],
      ['limit=ten', 'BAD_LIMIT'],
      ['limit=1&limit=2', 'BAD_LIMIT'],
      ['cursor=nope', 'BAD_CURSOR'],
      ['cursor=99999999999999999:x', 'BAD_CURSOR'],
      ['cursor=9007199254740992:x', 'BAD_CURSOR'],
      [`cursor=1:${'a'.repeat(257)}`, 'BAD_CURSOR'],
      ['cursor=1:%00', 'BAD_CURSOR'],
      ['cursor=1:', 'BAD_CURSOR'],
      ['state=proposed', 'BAD_STATE'],
      ['state=active&state=settled', 'BAD_STATE'],
    ]
    for (const [query, code] of bad) {
      for (const path of ['/v1/contract-db/contracts', '/v1/contract-db/disputes']) {
        const r = await client.call<{ error: { code: string; message: string } }>('GET', `${path}?${query}`)
        assert.equal(r.status, 400, `${path}?${query}`)
        assert.equal(r.body.error.code, code, `${path}?${query}`)
      }
    }
    assert.deepEqual(calls, [], 'no page was read for a refused query')
  })

  it('disputes: the claimed records whose requester disputed them', async () => {
    const disputed = { ...record('claimed'), dispute: { verification: {} as never, at: 7 } }
    contracts.push(disputed)
    try {
      calls.length = 0
      const r = await client.call<{ disputes: unknown[] }>('GET', '/v1/contract-db/disputes')
      assert.deepEqual(r.body.disputes, [disputed])
      assert.deepEqual(calls, ['page {"limit":100,"state":"claimed"}'], 'a page of the claimed contracts')
      const list = await client.call<{ contracts: Array<{ disputedAt?: number }> }>(
        'GET',
        '/v1/contract-db/contracts',
      )
      assert.deepEqual(
        list.body.contracts.map((c) => c.disputedAt ?? null),
        [null, null, null, 7],
      )
    } finally {
      contracts.pop()
    }
  })
})
