#!/usr/bin/env node
import '../../actors/polyfill.js'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { Command } from 'commander'
import { DaemonNotRunningError, RouteMissingError } from '../api/client.js'
import { registerContractDbCommands } from './contract-db.js'
import { demoCommand } from './demo.js'
import { devnetCommand } from './devnet.js'
import {
  jobCancelCommand,
  jobListCommand,
  jobLogsCommand,
  jobOutputsCommand,
  jobRunCommand,
  jobStatusCommand,
} from './job.js'
import {
  workflowCancelCommand,
  workflowListCommand,
  workflowRunCommand,
  workflowStatusCommand,
} from './workflow.js'
import { peersCommand } from './peers.js'
import { CliError, terminalSafe } from './output.js'
import { registerResourceCommands } from './resources.js'
import { initCommand, runCommand } from './run.js'

const defaultDataDir = process.env.DMS_DATA_DIR ?? join(homedir(), '.dms')
const defaultSocket = process.env.DMS_SOCKET || process.env.DMS_API_SOCKET || join(defaultDataDir, 'dms.sock')

const program = new Command('dms')
  .description('DMS: a peer-to-peer compute marketplace agent')
  .version('0.1.0')
  .showHelpAfterError()

program
  .command('init')
  .description(
    "create this node's identity (Ed25519 key sealed with DMS_PASSPHRASE, or a passphrase asked on the terminal) and print its peer id",
  )
  .option('--data-dir <dir>', 'data directory', defaultDataDir)
  .option('--json', 'print JSON')
  .action((o: { dataDir: string; json?: boolean }) => initCommand(o))

program
  .command('run')
  .description(
    'run a node until SIGINT/SIGTERM (a second signal exits at once). Config: a JSON file (specs/config.md) plus DMS_* environment overrides; the key passphrase comes from DMS_PASSPHRASE or a prompt. Prints one JSON "ready" line on stdout; logs are JSON on stderr',
  )
  .option('-c, --config <file>', 'node config (JSON); without it, defaults plus DMS_* variables')
  .option('--data-dir <dir>', "override the config's dataDir (and DMS_DATA_DIR)")
  .option('--log-level <level>', 'trace, debug, info, warn, error, fatal or silent (env DMS_LOG_LEVEL)')
  .addHelpText(
    'after',
    '\nEnvironment overrides (win over the file): DMS_DATA_DIR, DMS_LISTEN, DMS_BOOTSTRAP (comma lists),\nDMS_ONE_HOST, DMS_LOG_LEVEL, DMS_API_SOCKET, DMS_API_PORT (TCP listener on 127.0.0.1), DMS_API_TOKEN.',
  )
  .action((o: { config?: string; dataDir?: string; logLevel?: string }) =>
    runCommand({ ...o, defaultDataDir }),
  )

const socketOpt = ['--socket <path>', 'REST socket of the node (env DMS_SOCKET)', defaultSocket] as const

program
  .command('peers')
  .description('list the peers this node is connected to')
  .option('--json', 'print JSON')
  .option(...socketOpt)
  .action((o: { socket: string; json?: boolean }) => peersCommand(o))

const workflow = program
  .command('workflow')
  .description('post and inspect workflows (tasks that depend on each other) on a requester node')
workflow
  .command('run')
  .description('post a workflow document (specs/workflow.md)')
  .requiredOption('-f, --file <workflow>', 'workflow file (JSON)')
  .option('--wait', 'wait until it ends and print the task table; exit 2 unless it completed')
  .option('--follow', 'like --wait, printing each task change as it happens')
  .option('--json', 'print JSON')
  .option(...socketOpt)
  .action((o) => workflowRunCommand(o as Parameters<typeof workflowRunCommand>[0]))
workflow
  .command('list')
  .description("list this requester's workflows, newest first")
  .option('--json', 'print JSON')
  .option(...socketOpt)
  .action((o: { socket: string; json?: boolean }) => workflowListCommand(o))
workflow
  .command('status')
  .description("show a workflow's state, escrow plan and per-task table")
  .argument('<id>', 'workflow id')
  .option('--json', 'print JSON')
  .option(...socketOpt)
  .action((id: string, o: { socket: string; json?: boolean }) => workflowStatusCommand(id, o))
workflow
  .command('cancel')
  .description('cancel every live task of a workflow (the time used is paid); no new task starts')
  .argument('<id>', 'workflow id')
  .option('--json', 'print JSON')
  .option(...socketOpt)
  .action((id: string, o: { socket: string; json?: boolean }) => workflowCancelCommand(id, o))

const job = program.command('job').description('post and inspect jobs on a requester node')
job
  .command('run')
  .description('post a job: -f spec.json, or --image IMAGE [options] -- command args...')
  .argument('[command...]', 'the command to run in the container')
  .option('-f, --file <spec>', 'job spec file (JSON, see specs/job-spec.md)')
  .option('--image <image>', 'container image')
  .option('--cpu <cores>', 'CPU cores', '1')
  .option('--memory <size>', 'memory, e.g. 256MiB', '256MiB')
  .option('--timeout <seconds>', 'max duration in seconds', '300')
  .option('--max-price <amount>', 'price ceiling for the max duration', '100000')
  .option('--name <name>', 'job name')
  .option('--wait', "show the job's states until it ends; exit 2 unless it completed")
  .option('--follow', 'like --wait, and stream its logs live (states go to stderr)')
  .option('--json', 'print JSON')
  .option(...socketOpt)
  .action((command: string[], o) => jobRunCommand(command, o as Parameters<typeof jobRunCommand>[1]))
job
  .command('list')
  .description("list this requester's jobs, newest first")
  .option('--json', 'print JSON')
  .option(...socketOpt)
  .action((o: { socket: string; json?: boolean }) => jobListCommand(o))
job
  .command('status')
  .description("show a job's state, history, bids, contract, allocation, usage and settlement")
  .argument('<id>', 'job id')
  .option('--json', 'print JSON')
  .option(...socketOpt)
  .action((id: string, o: { socket: string; json?: boolean }) => jobStatusCommand(id, o))
job
  .command('logs')
  .description("print a job's stdout and stderr")
  .argument('<id>', 'job id')
  .option('--follow', 'stream the logs until the job ends')
  .option('--json', 'print JSON')
  .option(...socketOpt)
  .action((id: string, o: { socket: string; json?: boolean; follow?: boolean }) => jobLogsCommand(id, o))
job
  .command('outputs')
  .description("list a job's output files, or download them with --out")
  .argument('<id>', 'job id')
  .option('--out <dir>', 'write the files (and outputs.tar if any) into this folder, checking each sha256')
  .option('--json', 'print JSON')
  .option(...socketOpt)
  .action((id: string, o: { socket: string; json?: boolean; out?: string }) => jobOutputsCommand(id, o))
job
  .command('cancel')
  .description('cancel a job that has not ended')
  .argument('<id>', 'job id')
  .option('--json', 'print JSON')
  .option(...socketOpt)
  .action((id: string, o: { socket: string; json?: boolean }) => jobCancelCommand(id, o))

program
  .command('devnet')
  .description(
    'start a local network on 127.0.0.1 as separate processes: a contract-db, N providers and a requester, with approved identities and a funded requester; Ctrl-C stops them all',
  )
  .option('--providers <n>', 'number of providers (1-26)', '2')
  .option('--dir <dir>', 'keep data, configs and logs in this folder (default: a temp folder, removed)')
  .option('--keep', 'keep the temp folder at stop')
  .option('--json', 'print one JSON line with every socket and peer id once ready')
  .action((o: { providers: string; dir?: string; keep?: boolean; json?: boolean }) => devnetCommand(o))

registerResourceCommands(program, defaultDataDir)
registerContractDbCommands(program)

program
  .command('demo')
  .description(
    'start a devnet (contract-db, 2 providers, requester as separate processes) and run one job to settlement, printing the journey',
  )
  .option(
    '--image <image>',
    'image to run (build it with scripts/build-test-image.sh)',
    process.env.DMS_TEST_IMAGE ?? 'dms-test:1',
  )
  .option('--keep', 'keep the demo data directory and logs')
  .action((o: { image: string; keep?: boolean }) => demoCommand(o))

program.parseAsync(process.argv).catch((err: unknown) => {
  if (err instanceof CliError) {
    // Messages may quote what a server or a peer said: shown, never interpreted by the terminal.
    process.stderr.write(`dms: ${terminalSafe(err.message)}\n`)
    process.exit(err.exitCode)
  }
  if (err instanceof DaemonNotRunningError || err instanceof RouteMissingError) {
    process.stderr.write(`dms: ${terminalSafe(err.message)}\n`)
    process.exit(1)
  }
  // One line by default; the stack with DMS_LOG_LEVEL=debug (or trace).
  const debug = ['debug', 'trace'].includes(process.env.DMS_LOG_LEVEL ?? '')
  const text = err instanceof Error ? (debug ? (err.stack ?? err.message) : err.message) : String(err)
  process.stderr.write(`dms: unexpected error: ${terminalSafe(debug ? text : text.split('\n')[0])}\n`)
  process.exit(70)
})
