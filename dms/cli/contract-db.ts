/**
 * `dms contract-db ...`: run the contract-db verifier service as its own process, and operate it
 * (approve, revoke, credit, balance, contracts) over its local socket. Spec: specs/contract-db.md.
 */
import { readFile } from 'node:fs/promises'
import { cliPassphrase } from './passphrase.js'
import { startProblem } from './start-problem.js'
import { homedir } from 'node:os'
import { join, resolve } from 'node:path'
import type { Command } from 'commander'
import { ApiClient, ApiClientError, DaemonNotRunningError } from '../api/client.js'
import type { ContractDbFileConfig } from '../config.js'
import type { ContractDbConfig } from '../contract-db/node.js'
import { CONTRACT_DB_SOCKET } from '../contract-db/paths.js'
import type { ContractSummary } from '../contract-db/operator-api.js'
import type { Account, ApprovedEntity, ContractRecord } from '../contract-db/records.js'
import { CliError, print, printJson } from './output.js'

const defaultDir = process.env.DMS_CONTRACT_DB_DIR ?? join(homedir(), '.dms-contract-db')

interface Where {
  dataDir: string
  socket?: string
  json?: boolean
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
async function runService(opts: { dataDir?: string; config?: string }): Promise<void> {
  const fromFile = opts.config !== undefined ? await readConfig(opts.config) : {}
  const dataDir = opts.dataDir ?? fromFile.dataDir ?? defaultDir
  const cfg: ContractDbConfig = { ...fromFile, dataDir: resolve(dataDir) }
  // Loaded only to run one: the operator commands and --help do without (start-up time).
  const [{ createLogger }, { ContractDbNode }] = await Promise.all([
    import('../log.js'),
    import('../contract-db/node.js'),
  ])
  const log = createLogger()
  const node = new ContractDbNode(cfg, { log, passphrase: cliPassphrase() })
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
  }
  process.stdout.write(`${JSON.stringify(ready)}\n`)
  log.info(ready, 'contract-db running')
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

const showAccount = (a: Account) => print(`${a.peer}  balance ${a.balance}  escrow ${a.escrow}`)

export function registerContractDbCommands(program: Command): void {
  const cdb = program
    .command('contract-db')
    .description(
      'the contract-db verifier service: run it, approve entities, credit test tokens, show balances',
    )
  const where = (c: Command) =>
    c
      .option('--data-dir <dir>', 'the contract-db data directory (env DMS_CONTRACT_DB_DIR)', defaultDir)
      .option('--socket <path>', `operator socket (default <data-dir>/${CONTRACT_DB_SOCKET})`)
      .option('--json', 'print JSON')

  cdb
    .command('run')
    .description('run the contract-db as its own peer until SIGINT/SIGTERM (own key, db and socket)')
    .option('--data-dir <dir>', 'data directory (overrides the config file; env DMS_CONTRACT_DB_DIR)')
    .option(
      '-c, --config <file>',
      'config JSON: { dataDir, listen, bootstrap, oneHost, socket, approvalTtlMs, maxActiveVolunteerContracts, settleGraceMs, claimWindowMs, disputeWindowMs, expirySweepMs } (specs/config.md)',
    )
    .action((o: { dataDir?: string; config?: string }) => runService(o))

  where(
    cdb.command('approve').description('approve a peer id as a party to contracts').argument('<peer-id>'),
  ).action(async (peer: string, o: Where) => {
    const r = await call<ApprovedEntity>(o, 'PUT', `/v1/contract-db/approved/${encodeURIComponent(peer)}`)
    if (o.json) printJson(r)
    else print(`approved ${r.peer} (since ${new Date(r.approvedAt).toISOString()})`)
  })

  where(
    cdb
      .command('revoke')
      .description('revoke an approval: new contracts naming the peer are refused; active ones still settle')
      .argument('<peer-id>'),
  ).action(async (peer: string, o: Where) => {
    const r = await call<{ peer: string; revoked: boolean }>(
      o,
      'DELETE',
      `/v1/contract-db/approved/${encodeURIComponent(peer)}`,
    )
    if (o.json) printJson(r)
    else print(r.revoked ? `revoked ${peer}` : `${peer} was not approved`)
  })

  where(
    cdb
      .command('credit')
      .description("add test tokens to a peer's balance")
      .argument('<peer-id>')
      .argument('<amount>', 'micro-tokens (a whole number; 1 token = 1000000)'),
  ).action(async (peer: string, amount: string, o: Where) => {
    const acc = await call<Account>(
      o,
      'POST',
      `/v1/contract-db/accounts/${encodeURIComponent(peer)}/credit`,
      {
        amount: parseAmount(amount),
      },
    )
    if (o.json) printJson(acc)
    else showAccount(acc)
  })

  where(
    cdb
      .command('balance')
      .description('show balances (micro-tokens): one peer, or every account')
      .argument('[peer-id]'),
  ).action(async (peer: string | undefined, o: Where) => {
    if (peer !== undefined) {
      const acc = await call<Account>(o, 'GET', `/v1/contract-db/accounts/${encodeURIComponent(peer)}`)
      if (o.json) printJson(acc)
      else showAccount(acc)
      return
    }
    const { accounts } = await call<{ accounts: Account[] }>(o, 'GET', '/v1/contract-db/accounts')
    if (o.json) printJson({ accounts })
    else if (accounts.length === 0) print('no accounts')
    else accounts.forEach(showAccount)
  })

  where(cdb.command('approved').description('list approved entities')).action(async (o: Where) => {
    const { approved } = await call<{ approved: ApprovedEntity[] }>(o, 'GET', '/v1/contract-db/approved')
    if (o.json) printJson({ approved })
    else if (approved.length === 0) print('no approved entities')
    else for (const a of approved) print(`${a.peer}  since ${new Date(a.approvedAt).toISOString()}`)
  })

  where(cdb.command('contracts').description('list contracts and their states')).action(async (o: Where) => {
    const { contracts } = await call<{ contracts: ContractSummary[] }>(o, 'GET', '/v1/contract-db/contracts')
    if (o.json) printJson({ contracts })
    else if (contracts.length === 0) print('no contracts')
    else
      for (const c of contracts)
        print(
          `${c.contractId}  ${c.state.padEnd(10)}  escrow ${c.escrow}` +
            (c.paidToProvider !== undefined
              ? `  paid ${c.paidToProvider} refunded ${c.refundedToRequester}`
              : '') +
            (c.reason ? `  (${c.reason})` : '') +
            (c.disputedAt !== undefined ? '  DISPUTED' : ''),
        )
  })

  where(
    cdb
      .command('disputes')
      .description("claims their requesters disputed: the claim's receipt and the requester's verification"),
  ).action(async (o: Where) => {
    const { disputes } = await call<{ disputes: ContractRecord[] }>(o, 'GET', '/v1/contract-db/disputes')
    if (o.json) printJson({ disputes })
    else if (disputes.length === 0) print('no disputes')
    else
      for (const d of disputes) {
        const v = d.dispute!.verification.verification
        print(
          `${d.contract.terms.contractId}  claimed by ${d.closedBy} paid ${d.settlement?.paidToProvider}` +
            `  disputed ${new Date(d.dispute!.at).toISOString()}: outputs ${v.outputsHashOk ? 'ok' : 'bad'}, receipt signature ${v.receiptSignatureOk ? 'ok' : 'bad'}`,
        )
      }
  })
}
