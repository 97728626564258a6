/** `dms job run|quote|list|prune|rerun|status|logs|outputs|cancel`: jobs on a requester node. */
import { collect, DEFAULT_MAX_PRICE, RUN_FIELD_FLAGS } from '../flags.js'
import type { JobListOptions } from '../job.js'
import type { JobRunOptions } from '../job-run.js'
import type { RegisterCommand } from './types.js'

// Loaded by the command that runs, not for `dms --help` (start-up time).
const jobs = () => import('../job.js')
const watching = () => import('../job-watch.js')

export const registerJob: RegisterCommand = (program, { socketOpt }) => {
  const job = program.command('job').description('post and inspect jobs on a requester node')
  const run = job
    .command('run')
    .description(
      'post a job: -f spec.json (the whole spec: other spec flags are refused), or --image IMAGE [options] -- command args..., or --runtime PATH [options] -- args...',
    )
    .argument('[command...]', "the command to run in the container (with --runtime: the runtime's arguments)")
    .option(
      '-f, --file <spec>',
      'job spec file (JSON, see specs/job-spec.md); the output of `dms job status --json` is taken too (its spec)',
    )
    .option('--image <image>', 'container image')
    .option(
      '--runtime <path>',
      'instead of --image: a program the provider offers (process engine), e.g. /bin/sh; the arguments follow --',
    )
    .option('--cpu <cores>', 'CPU cores, or millicores: 0.5, 500m (default 1)')
    .option('--memory <size>', 'memory, e.g. 256MiB, 64m, 1Gi (default 256MiB)')
    .option('--disk <size>', "disk quota, e.g. 1GiB (default: the provider's)")
    .option('--gpu <n>', 'GPUs (default 0)')
    .option('--gpu-model <model>', 'only GPUs of this model, e.g. H100 (with --gpu)')
    .option('--gpu-memory <size>', 'only GPUs with at least this much memory each, e.g. 80GiB (with --gpu)')
    .option('-e, --env <NAME=value>', 'environment variable (repeatable)', collect)
  for (const f of RUN_FIELD_FLAGS) run.option(f.flag, f.help)
  run
    .option(
      '--input <file[:path]>',
      'upload a local file and stage it read-only at /inputs/<path> (default: its file name); repeatable, also with -f',
      collect,
    )
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
      '--start-by <time|duration>',
      'the latest start accepted: an ISO 8601 time, or a duration after the start (10m); later bids are declined',
    )
    .option(
      '--provider <peer>',
      'send the bid request straight to this provider, never on gossip (repeat for several)',
      collect,
    )
    .option('--queue <queue>', 'join this queue: its id, its tag or a unique id prefix (also with -f)')
    .option(
      '--wait',
      "wait for the job to end: states on stderr, then its stdout and stderr; exits with the container's exit code (2 if it never ran)",
    )
    .option('--follow', 'like --wait, and stream its logs live')
    .option('--json', 'print JSON')
    .option(...socketOpt)
    .action(async (command: string[], o: JobRunOptions) =>
      (await import('../job-run.js')).jobRunCommand(command, o),
    )
  job
    .command('quote')
    .description(
      'ask for bids without running: one bid round, no contract, every reservation released (-f spec.json, or --image ... -- command, or --runtime ... -- args)',
    )
    .argument('[command...]', 'the command to run in the container')
    .option('-f, --file <spec>', 'job spec file (JSON, see specs/job-spec.md)')
    .option('--image <image>', 'container image')
    .option(
      '--runtime <path>',
      'instead of --image: a program the provider offers (process engine), e.g. /bin/sh; the arguments follow --',
    )
    .option('--cpu <cores>', 'CPU cores, or millicores: 0.5, 500m (default 1)')
    .option('--memory <size>', 'memory, e.g. 256MiB, 64m, 1Gi (default 256MiB)')
    .option('--disk <size>', "disk quota, e.g. 1GiB (default: the provider's)")
    .option('--gpu <n>', 'GPUs (default 0)')
    .option('--gpu-model <model>', 'only GPUs of this model, e.g. H100 (with --gpu)')
    .option('--gpu-memory <size>', 'only GPUs with at least this much memory each, e.g. 80GiB (with --gpu)')
    .option('-e, --env <NAME=value>', 'environment variable (repeatable)', collect)
    .option('--timeout <duration>', 'max duration: seconds, or 90s, 10m, 2h, 1h30m (default 300)')
    .option(
      '--max-price <amount>',
      `price ceiling for the max duration, micro-tokens (default ${DEFAULT_MAX_PRICE})`,
    )
    .option('--json', 'print JSON')
    .option(...socketOpt)
    .action(async (command: string[], o: JobRunOptions) =>
      (await import('../job-quote.js')).jobQuoteCommand(command, o),
    )
  job
    .command('list')
    .alias('ls')
    .description("one page of this requester's jobs, newest first (a table; --json for the reply)")
    .option('--state <state>', 'only jobs in this state (e.g. failed, running, completed)')
    .option('--queue <queue>', 'only jobs of this queue: its id, tag or a unique id prefix')
    .option('--since <time>', 'only jobs created at or after this time (ISO 8601)')
    .option('--limit <n>', 'jobs per page (1-1000)', '20')
    .option('--cursor <cursor>', 'the next page, as the previous one said')
    .option('-w, --watch', 'then print each job of the page again as it changes (until Ctrl-C)')
    .option('--json', 'print JSON')
    .option(...socketOpt)
    .action(async (o: JobListOptions & { watch?: boolean }) =>
      o.watch ? (await watching()).jobListWatch(o) : (await jobs()).jobListCommand(o),
    )
  job
    .command('prune')
    .description(
      'delete ended jobs by age or count, with their unused blobs and grants (never a live job); defaults: requester.retention',
    )
    .option('--max-age-days <n>', 'ended jobs created more than this many days ago')
    .option('--keep-last <n>', 'keep only the newest this many ended jobs')
    .option('--json', 'print JSON')
    .option(...socketOpt)
    .action(async (o: { socket: string; json?: boolean; maxAgeDays?: string; keepLast?: string }) =>
      (await jobs()).jobPruneCommand(o),
    )
  job
    .command('rerun')
    .description('post a new job from the spec of an ended job (linked to it by rerunOf)')
    .argument('<id>', 'job id or a unique prefix of it')
    .option('--json', 'print JSON')
    .option(...socketOpt)
    .action(async (id: string, o: { socket: string; json?: boolean }) =>
      (await jobs()).jobRerunCommand(id, o),
    )
  job
    .command('status')
    .alias('describe')
    .description("show a job's state, history, bids, contract, allocation, usage and settlement")
    .argument('<id>', 'job id or a unique prefix of it')
    .option('-w, --watch', 'print it again each time it changes, until the job ends (or Ctrl-C)')
    .option('--json', 'print JSON')
    .option(...socketOpt)
    .action(async (id: string, o: { socket: string; json?: boolean; watch?: boolean }) =>
      o.watch
        ? (await watching()).jobStatusWatch(id, o)
        : (await import('../job-status.js')).jobStatusCommand(id, o),
    )
  job
    .command('logs')
    .description("print a job's stdout and stderr")
    .argument('<id>', 'job id or a unique prefix of it')
    .option('-f, --follow', 'stream the logs until the job ends')
    .option('--member <name>', "a pod's member: only its output")
    .option('--json', 'print JSON')
    .option(...socketOpt)
    .action(async (id: string, o: { socket: string; json?: boolean; follow?: boolean; member?: string }) =>
      (await jobs()).jobLogsCommand(id, o),
    )
  job
    .command('outputs')
    .description("list a job's output files, or download them with --out")
    .argument('<id>', 'job id or a unique prefix of it')
    .option('--out <dir>', 'write the files (and outputs.tar if any) into this folder, checking each sha256')
    .option('--force', 'overwrite files that already exist in --out')
    .option('--json', 'print JSON')
    .option(...socketOpt)
    .action(async (id: string, o: { socket: string; json?: boolean; out?: string; force?: boolean }) =>
      (await jobs()).jobOutputsCommand(id, o),
    )
  job
    .command('cancel')
    .alias('stop')
    .description('cancel a job that has not ended')
    .argument('<id>', 'job id or a unique prefix of it')
    .option('--json', 'print JSON')
    .option(...socketOpt)
    .action(async (id: string, o: { socket: string; json?: boolean }) =>
      (await jobs()).jobCancelCommand(id, o),
    )
}
