#!/usr/bin/env node
import '../../actors/polyfill.js'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { Command } from 'commander'
import { DaemonNotRunningError, RouteMissingError } from '../api/client.js'
import { registerContractDbCommands } from './contract-db.js'
import { jobQuoteCommand } from './job-quote.js'
import { collect, DEFAULT_MAX_PRICE, jobRunCommand } from './job-run.js'
import {
  jobCancelCommand,
  jobListCommand,
  jobLogsCommand,
  jobOutputsCommand,
  jobPruneCommand,
  jobRerunCommand,
  jobStatusCommand,
  type JobListOptions,
} from './job.js'
import { registerKeyCommands } from './key.js'
import { registerModeCommands } from './node-mode.js'
import { registerQueueCommands } from './queue.js'
import {
  workflowCancelCommand,
  workflowListCommand,
  workflowRunCommand,
  workflowStatusCommand,
} from './workflow.js'
import { peersCommand } from './peers.js'
import { CliError, terminalSafe } from './output.js'
import { registerEarningsCommand } from './earnings.js'
import { registerResourceCommands } from './resources.js'

const defaultDataDir = process.env.DMS_DATA_DIR ?? join(homedir(), '.dms')
const defaultSocket = process.env.DMS_SOCKET || process.env.DMS_API_SOCKET || join(defaultDataDir, 'dms.sock')

// A reader that stops early (`dms job list | head -1`) closes the pipe: that ends the output, not
// an error worth a stack trace.
for (const stream of [process.stdout, process.stderr])
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(0)
    throw err
  })

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
  .action(async (o: { dataDir: string; json?: boolean }) => (await import('./run.js')).initCommand(o))

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
  .action(async (o: { config?: string; dataDir?: string; logLevel?: string }) =>
    (await import('./run.js')).runCommand({ ...o, defaultDataDir }),
  )

const socketOpt = ['--socket <path>', 'REST socket of the node (env DMS_SOCKET)', defaultSocket] as const

program
  .command('peers')
  .description(
    'list the peers this node is connected to: roles, direct or relayed, latency, direction, gossip score, addresses',
  )
  .option('--json', 'print JSON')
  .option(...socketOpt)
  .action((o: { socket: string; json?: boolean }) => peersCommand(o))

program
  .command('dashboard')
  .description(
    "print a one-time login link to the node's web dashboard (served on the API's TCP listener, api.tcp)",
  )
  .option('--open', 'also open the link with xdg-open')
  .option('--json', 'print JSON: { url, expiresAt }')
  .option(...socketOpt)
  .action(async (o: { socket: string; open?: boolean; json?: boolean }) =>
    (await import('./dashboard.js')).dashboardCommand(o),
  )

program
  .command('swarm-key')
  .description('print a new pre-shared key for a private network (save it, set network.pnet.keyFile)')
  .action(async () => {
    const { newSwarmKey } = await import('../network/pnet.js')
    process.stdout.write(`${newSwarmKey()}\n`)
  })
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
  .description(
    'post a job: -f spec.json (the whole spec: other spec flags are refused), or --image IMAGE [options] -- command args...',
  )
  .argument('[command...]', 'the command to run in the container')
  .option('-f, --file <spec>', 'job spec file (JSON, see specs/job-spec.md)')
  .option('--image <image>', 'container image')
  .option('--cpu <cores>', 'CPU cores (default 1)')
  .option('--memory <size>', 'memory, e.g. 256MiB (default 256MiB)')
  .option('--disk <size>', "disk quota, e.g. 1GiB (default: the provider's)")
  .option('--gpu <n>', 'GPUs (default 0)')
  .option('--env <NAME=value>', 'environment variable (repeatable)', collect)
  .option('--timeout <duration>', 'max duration: seconds, or 90s, 10m, 2h, 1h30m (default 300)')
  .option(
    '--max-price <amount>',
    `price ceiling for the max duration, micro-tokens (default ${DEFAULT_MAX_PRICE})`,
  )
  .option('--name <name>', 'job name')
  .option(
    '--queue-timeout <duration>',
    'wait in `queued` up to this long (600, 90s, 10m, 2h) when no provider has room; 0 fails at once',
  )
  .option('--start-at <time>', 'start bidding at this ISO 8601 time (e.g. 2026-11-22T18:00:00Z)')
  .option(
    '--provider <peer>',
    'send the bid request straight to this provider, never on gossip (repeat for several)',
    collect,
  )
  .option(
    '--wait',
    "wait for the job to end: states on stderr, then its stdout and stderr; exits with the container's exit code (2 if it never ran)",
  )
  .option('--follow', 'like --wait, and stream its logs live')
  .option('--json', 'print JSON')
  .option(...socketOpt)
  .action((command: string[], o) => jobRunCommand(command, o as Parameters<typeof jobRunCommand>[1]))
job
  .command('quote')
  .description(
    'ask for bids without running: one bid round, no contract, every reservation released (-f spec.json, or --image ... -- command)',
  )
  .argument('[command...]', 'the command to run in the container')
  .option('-f, --file <spec>', 'job spec file (JSON, see specs/job-spec.md)')
  .option('--image <image>', 'container image')
  .option('--cpu <cores>', 'CPU cores (default 1)')
  .option('--memory <size>', 'memory, e.g. 256MiB (default 256MiB)')
  .option('--timeout <duration>', 'max duration: seconds, or 90s, 10m, 2h, 1h30m (default 300)')
  .option(
    '--max-price <amount>',
    `price ceiling for the max duration, micro-tokens (default ${DEFAULT_MAX_PRICE})`,
  )
  .option('--json', 'print JSON')
  .option(...socketOpt)
  .action((command: string[], o) => jobQuoteCommand(command, o as Parameters<typeof jobQuoteCommand>[1]))
job
  .command('list')
  .description("one page of this requester's jobs, newest first (a table; --json for the reply)")
  .option('--state <state>', 'only jobs in this state (e.g. failed, running, completed)')
  .option('--queue <id>', 'only jobs of this queue')
  .option('--since <time>', 'only jobs created at or after this time (ISO 8601)')
  .option('--limit <n>', 'jobs per page (1-1000)', '20')
  .option('--cursor <cursor>', 'the next page, as the previous one said')
  .option('--json', 'print JSON')
  .option(...socketOpt)
  .action((o: JobListOptions) => jobListCommand(o))
job
  .command('prune')
  .description(
    'delete ended jobs by age or count, with their unused blobs and grants (never a live job); defaults: requester.retention',
  )
  .option('--max-age-days <n>', 'ended jobs created more than this many days ago')
  .option('--keep-last <n>', 'keep only the newest this many ended jobs')
  .option('--json', 'print JSON')
  .option(...socketOpt)
  .action((o: { socket: string; json?: boolean; maxAgeDays?: string; keepLast?: string }) =>
    jobPruneCommand(o),
  )
job
  .command('rerun')
  .description('post a new job from the spec of an ended job (linked to it by rerunOf)')
  .argument('<id>', 'job id')
  .option('--json', 'print JSON')
  .option(...socketOpt)
  .action((id: string, o: { socket: string; json?: boolean }) => jobRerunCommand(id, o))
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
  .option('--force', 'overwrite files that already exist in --out')
  .option('--json', 'print JSON')
  .option(...socketOpt)
  .action((id: string, o: { socket: string; json?: boolean; out?: string; force?: boolean }) =>
    jobOutputsCommand(id, o),
  )
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
  .action(async (o: { providers: string; dir?: string; keep?: boolean; json?: boolean }) =>
    (await import('./devnet.js')).devnetCommand(o),
  )

registerQueueCommands(program, [...socketOpt])
registerModeCommands(program, [...socketOpt])
registerResourceCommands(program, defaultDataDir)
registerKeyCommands(program, defaultDataDir)
registerEarningsCommand(program, defaultDataDir)
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
  .action(async (o: { image: string; keep?: boolean }) => (await import('./demo.js')).demoCommand(o))

program
  .command('version')
  .description('print the dms version and the protocol versions it speaks')
  .option('--json', 'print JSON')
  .action(async (o: { json?: boolean }) => (await import('./version.js')).versionCommand(o))

program
  .command('completion')
  .description('print a shell completion script: source <(dms completion bash), or zsh')
  .argument('<shell>', 'bash or zsh')
  .action(async (shell: string) => {
    if (shell !== 'bash' && shell !== 'zsh')
      throw new CliError(`completion: shell must be bash or zsh, not ${shell}`)
    process.stdout.write((await import('./completion.js')).completionScript(program, shell))
  })

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
