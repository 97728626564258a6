/**
 * `dms contract-db ...`: run the contract-db verifier service as its own process, and operate it
 * (approve, revoke, credit, balance, contracts) over its local socket. Spec: specs/contract-db.md.
 */
import { readFile } from 'node:fs/promises'
import { compactHeap } from './compact-heap.js'
import { cliPassphrase } from './passphrase.js'
import { startProblem } from './start-problem.js'
import { homedir } from 'node:os'
import { join, resolve } from 'node:path'
import { ApiClient, ApiClientError, DaemonNotRunningError } from '../api/client.js'
import type { ContractDbFileConfig } from '../config.js'
import type { ContractDbConfig } from '../contract-db/node.js'
import { CONTRACT_DB_SOCKET } from '../contract-db/paths.js'
import type { ContractSummary } from '../contract-db/operator-api.js'
import type { Account, ApprovedEntity, ContractRecord } from '../contract-db/records.js'
import { DEFAULT_ROLES } from '../contracts/model.js'
import { CliError, cliLogger, print, printData, printNote } from './output.js'
import { printRows, printTable } from './table.js'

const iso = (t: number | undefined) => (t === undefined ? undefined : new Date(t).toISOString())

const defaultDir = process.env.DMS_CONTRACT_DB_DIR ?? join(homedir(), '.dms-contract-db')

export interface Where {
  dataDir: string
  socket?: string
  json?: boolean
}

/** A listing's page: `--limit`, `--cursor` (the previous page's `next`), `--state`. */
export interface PageOptions {
  limit?: string
  cursor?: string
  state?: string
}

/** The listing's query string; the service checks each value (BAD_LIMIT, BAD_CURSOR, BAD_STATE). */
function pageQuery(o: PageOptions): string {
  const q = new URLSearchParams()
  if (o.limit !== undefined) q.set('limit', o.limit)
  if (o.cursor !== undefined) q.set('cursor', o.cursor)
  if (o.state !== undefined) q.set('state', o.state)
  const s = q.toString()
  return s === '' ? '' : `?${s}`
}

async function readConfig(path: string): Promise<ContractDbFileConfig> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (err) {
    throw new CliError(`cannot read config ${path}: ${(err as Error).message}`)
  }
  let file: unknown
  try {
    file = JSON.parse(text)
  } catch (err) {
    throw new CliError(`config ${path} is not valid JSON: ${(err as Error).message}`)
  }
  const { ConfigError, loadContractDbConfig } = await import('../config.js')
  try {
    return loadContractDbConfig(file, `config ${path}`)
  } catch (err) {
    if (err instanceof ConfigError) throw new CliError(err.message)
    throw err
  }
}

/**
 * `dms contract-db run`: runs until SIGINT/SIGTERM. Prints one JSON line
 * `{"event":"ready","role":"contract-db",...}` on stdout once it serves; logs go to stderr.
 */
export async function runService(opts: { dataDir?: string; config?: string }): Promise<void> {
  const fromFile = opts.config !== undefined ? await readConfig(opts.config) : {}
  const dataDir = opts.dataDir ?? fromFile.dataDir ?? defaultDir
  const cfg: ContractDbConfig = { ...fromFile, dataDir: resolve(dataDir) }
  // Loaded only to run one: the operator commands and --help do without (start-up time).
  const [{ createLogger }, { ContractDbNode }, { testHooksFromEnv }] = await Promise.all([
    import('../log.js'),
    import('../contract-db/node.js'),
    import('../test-hooks.js'),
  ])
  const log = cliLogger(createLogger)
  const node = new ContractDbNode(cfg, {
    log,
    passphrase: cliPassphrase(),
    killAfterLock: testHooksFromEnv(process.env).cdbKillAfterLock,
  })
  try {
    await node.start()
  } catch (err) {
    await startProblem(err, { dataDir: cfg.dataDir, listen: cfg.listen })
  }
  const ready = {
    event: 'ready',
    role: 'contract-db',
    peerId: node.peerId,
    addrs: node.addrs(),
    socket: node.socketPath ?? null,
    tcp: node.webAddress ?? null,
    metrics: node.metricsAddress ?? null,
  }
  process.stdout.write(`${JSON.stringify(ready)}\n`)
  log.info(ready, 'contract-db running')
  compactHeap() // the start's garbage given back before the service idles (compact-heap.ts)
  await new Promise<void>((done) => {
    let stopping = false
    const onSignal = (sig: string) => {
      if (stopping) process.exit(130)
      stopping = true
      log.info({ sig }, 'stopping')
      void node.stop().then(done)
    }
    process.on('SIGINT', () => onSignal('SIGINT'))
    process.on('SIGTERM', () => onSignal('SIGTERM'))
  })
}

/** Calls the running service's operator API, turning "not running" into how to start it. */
async function call<T>(w: Where, method: string, path: string, body?: unknown): Promise<T> {
  const socket = resolve(w.socket ?? join(w.dataDir, CONTRACT_DB_SOCKET))
  try {
    return await new ApiClient(socket).ok<T>(method, path, body)
  } catch (err) {
    if (err instanceof DaemonNotRunningError)
      throw new CliError(
        `no contract-db answers on ${socket}: start it with 'dms contract-db run --data-dir ${resolve(w.dataDir)}'`,
      )
    if (err instanceof ApiClientError) throw new CliError(`${err.code}: ${err.message}`)
    throw err
  }
}

/** Parses an amount of micro-tokens: digits only, a safe integer. */
export function parseAmount(s: string): number {
  if (!/^\d+$/.test(s.replaceAll('_', '')))
    throw new CliError(`amount must be a whole number of micro-tokens, got ${JSON.stringify(s)}`)
  const n = Number(s.replaceAll('_', ''))
  if (!Number.isSafeInteger(n) || n === 0)
    throw new CliError(`amount must be between 1 and ${Number.MAX_SAFE_INTEGER} micro-tokens, got ${s}`)
  return n
}

const showAccounts = (accounts: Account[]) =>
  printTable(
    ['PEER', 'BALANCE', 'ESCROW'],
    accounts.map((a) => [a.peer, a.balance, a.escrow]),
  )

/** `dms contract-db approve <peer> [--role r,r]`. */
export async function approveCommand(peer: string, o: Where & { role?: string }): Promise<void> {
  const roles = o.role
    ?.split(',')
    .map((r) => r.trim())
    .filter((r) => r !== '')
  const r = await call<ApprovedEntity>(
    o,
    'PUT',
    `/v1/contract-db/approved/${encodeURIComponent(peer)}`,
    roles === undefined ? undefined : { roles },
  )
  if (o.json) printData(r)
  else
    print(
      `approved ${r.peer} as ${(r.roles ?? DEFAULT_ROLES).join(', ')} (since ${new Date(r.approvedAt).toISOString()})`,
    )
}

/** `dms contract-db revoke <peer>`. */
export async function revokeCommand(peer: string, o: Where): Promise<void> {
  const r = await call<{ peer: string; revoked: boolean }>(
    o,
    'DELETE',
    `/v1/contract-db/approved/${encodeURIComponent(peer)}`,
  )
  if (o.json) printData(r)
  else print(r.revoked ? `revoked ${peer}` : `${peer} was not approved`)
}

/** `dms contract-db credit <peer> <amount>`. */
export async function creditCommand(peer: string, amount: string, o: Where): Promise<void> {
  const acc = await call<Account>(o, 'POST', `/v1/contract-db/accounts/${encodeURIComponent(peer)}/credit`, {
    amount: parseAmount(amount),
  })
  if (o.json) printData(acc)
  else showAccounts([acc])
}

/** `dms contract-db balance [peer]`. */
export async function balanceCommand(peer: string | undefined, o: Where): Promise<void> {
  if (peer !== undefined) {
    const acc = await call<Account>(o, 'GET', `/v1/contract-db/accounts/${encodeURIComponent(peer)}`)
    if (o.json) printData(acc)
    else showAccounts([acc])
    return
  }
  const { accounts } = await call<{ accounts: Account[] }>(o, 'GET', '/v1/contract-db/accounts')
  if (o.json) printData({ accounts })
  else if (accounts.length === 0) print('no accounts')
  else showAccounts(accounts)
}

/** `dms contract-db approved`. */
export async function approvedCommand(o: Where): Promise<void> {
  const { approved } = await call<{ approved: ApprovedEntity[] }>(o, 'GET', '/v1/contract-db/approved')
  if (o.json) printData({ approved })
  else if (approved.length === 0) print('no approved entities')
  else
    printTable(
      ['PEER', 'ROLES', 'APPROVED'],
      approved.map((a) => [
        a.peer,
        (a.roles ?? DEFAULT_ROLES).join(','),
        new Date(a.approvedAt).toISOString(),
      ]),
    )
}

/** `dms contract-db contracts`: one page, newest first. */
export async function contractsCommand(o: Where & PageOptions): Promise<void> {
  const page = await call<{ contracts: ContractSummary[]; next?: string }>(
    o,
    'GET',
    `/v1/contract-db/contracts${pageQuery(o)}`,
  )
  const { contracts } = page
  if (o.json) return printData(page)
  if (contracts.length === 0) printNote('no contracts')
  else
    printRows<ContractSummary>(
      [
        { header: 'CONTRACT', cell: (c) => c.contractId },
        { header: 'STATE', cell: (c) => (c.disputedAt !== undefined ? `${c.state} (disputed)` : c.state) },
        { header: 'ESCROW', cell: (c) => c.escrow },
        { header: 'PAID', cell: (c) => c.paidToProvider },
        { header: 'REFUNDED', cell: (c) => c.refundedToRequester },
        { header: 'REASON', cell: (c) => c.reason },
        { header: 'JOB', cell: (c) => c.jobId, wide: true },
        { header: 'REQUESTER', cell: (c) => c.requester, wide: true },
        { header: 'PROVIDER', cell: (c) => c.provider, wide: true },
        { header: 'ACTIVATED', cell: (c) => iso(c.activatedAt), wide: true },
        { header: 'DISPUTED', cell: (c) => iso(c.disputedAt), wide: true },
      ],
      contracts,
    )
  if (page.next !== undefined) printNote(`more: add --cursor ${page.next}`)
}

/** `dms contract-db disputes`. */
export async function disputesCommand(o: Where & PageOptions): Promise<void> {
  const page = await call<{ disputes: ContractRecord[]; next?: string }>(
    o,
    'GET',
    `/v1/contract-db/disputes${pageQuery({ limit: o.limit, cursor: o.cursor })}`,
  )
  const { disputes } = page
  if (o.json) printData(page)
  else if (disputes.length === 0)
    printNote(page.next === undefined ? 'no disputes' : 'no disputes in this page')
  else
    printTable(
      ['CONTRACT', 'CLAIMED BY', 'PAID', 'DISPUTED', 'OUTPUTS', 'RECEIPT SIGNATURE'],
      disputes.map((d) => {
        const v = d.dispute!.verification.verification
        return [
          d.contract.terms.contractId,
          d.closedBy,
          d.settlement?.paidToProvider,
          new Date(d.dispute!.at).toISOString(),
          v.outputsHashOk ? 'ok' : 'bad',
          v.receiptSignatureOk ? 'ok' : 'bad',
        ]
      }),
    )
  if (!o.json && page.next !== undefined) printNote(`more: add --cursor ${page.next}`)
}
