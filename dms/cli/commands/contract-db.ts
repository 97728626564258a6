/** `dms contract-db run|approve|revoke|credit|balance|approved|contracts|disputes|migrate|dashboard` (specs/contract-db.md). */
import type { Command } from 'commander'
import { homedir } from 'node:os'
import { join, resolve } from 'node:path'
import { CONTRACT_DB_SOCKET } from '../../contract-db/paths.js'
import type { PageOptions, Where } from '../contract-db.js'
import type { RegisterCommand } from './types.js'

const cdbCli = () => import('../contract-db.js')

export const registerContractDb: RegisterCommand = (program) => {
  const defaultDir = process.env.DMS_CONTRACT_DB_DIR ?? join(homedir(), '.dms-contract-db')
  const cdb = program
    .command('contract-db')
    .description(
      'the contract-db verifier service: run it, approve entities, credit test tokens, show balances, open its dashboard',
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
      'config JSON: { dataDir, listen, bootstrap, oneHost, socket, web, metrics, approvalTtlMs, maxActiveVolunteerContracts, settleGraceMs, claimWindowMs, disputeWindowMs, expirySweepMs, store: { backend: level|postgres, url, passwordFile }, instance } (specs/config.md)',
    )
    .action(async (o: { dataDir?: string; config?: string }) => (await cdbCli()).runService(o))

  where(
    cdb
      .command('approve')
      .description('approve a peer id as a party to contracts, with its roles (again: change its roles)')
      .argument('<peer-id>')
      .option(
        '--role <roles>',
        'what it may do, comma-separated: requester (bid requests, reservations), provider (bids, capacity news), relay (serve relayed connections) (default: requester,provider for a new approval, else the roles it has)',
      ),
  ).action(async (peer: string, o: Where & { role?: string }) => (await cdbCli()).approveCommand(peer, o))

  where(
    cdb
      .command('revoke')
      .description('revoke an approval: new contracts naming the peer are refused; active ones still settle')
      .argument('<peer-id>'),
  ).action(async (peer: string, o: Where) => (await cdbCli()).revokeCommand(peer, o))

  where(
    cdb
      .command('credit')
      .description("add test tokens to a peer's balance")
      .argument('<peer-id>')
      .argument('<amount>', 'micro-tokens (a whole number; 1 token = 1000000)'),
  ).action(async (peer: string, amount: string, o: Where) => (await cdbCli()).creditCommand(peer, amount, o))

  where(
    cdb
      .command('balance')
      .description('show balances (micro-tokens): one peer, or every account')
      .argument('[peer-id]'),
  ).action(async (peer: string | undefined, o: Where) => (await cdbCli()).balanceCommand(peer, o))

  where(cdb.command('approved').description('list approved entities')).action(async (o: Where) =>
    (await cdbCli()).approvedCommand(o),
  )

  where(
    cdb
      .command('contracts')
      .description(
        'one page of the contracts and their states, newest first (the last line says how to get the next)',
      )
      .option(
        '--state <state>',
        'only contracts in this state: active, settled, terminated, claimed, expired',
      )
      .option('--limit <n>', 'contracts per page (1-1000)', '100')
      .option('--cursor <cursor>', 'the next page, as the previous one said'),
  ).action(async (o: Where & PageOptions) => (await cdbCli()).contractsCommand(o))

  where(
    cdb
      .command('disputes')
      .description(
        "claims their requesters disputed, in one page of the claimed contracts: the claim's receipt and the requester's verification",
      )
      .option('--limit <n>', 'claimed contracts read per page (1-1000)', '100')
      .option('--cursor <cursor>', 'the next page, as the previous one said'),
  ).action(async (o: Where & PageOptions) => (await cdbCli()).disputesCommand(o))

  cdb
    .command('migrate')
    .description(
      "copy a stopped level contract-db's books (approvals, accounts, contracts with their claims, disputes and settlements) into an empty PostgreSQL schema, check every balance, escrow and contract, and print the figures",
    )
    .requiredOption(
      '--to <url>',
      'the PostgreSQL database: postgres://user@host:port/database (a password in it is never printed)',
    )
    .option(
      '--password-file <file>',
      "a file whose first line is the database's password (as store.passwordFile)",
    )
    .option('--data-dir <dir>', 'the contract-db data directory (env DMS_CONTRACT_DB_DIR)', defaultDir)
    .option('--json', 'print JSON')
    .action(async (o: { to: string; passwordFile?: string; dataDir: string; json?: boolean }) =>
      (await import('../contract-db-migrate.js')).migrateCommand(o),
    )

  where(
    cdb
      .command('dashboard')
      .description(
        "print a one-time login link to the operator's web dashboard (served on its TCP listener, web in the config)",
      )
      .option('--open', 'also open the link with xdg-open'),
  ).action(async (o: Where & { open?: boolean }) => {
    const socket = resolve(o.socket ?? join(o.dataDir, CONTRACT_DB_SOCKET))
    await (
      await import('../dashboard.js')
    ).dashboardCommand({
      socket,
      open: o.open,
      json: o.json,
      notRunning: `no contract-db answers on ${socket}: start it with 'dms contract-db run --data-dir ${resolve(o.dataDir)}'`,
    })
  })
}
