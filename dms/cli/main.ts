#!/usr/bin/env node
import '../../actors/polyfill.js'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { Command } from 'commander'
import { DaemonNotRunningError } from '../api/client.js'
import { registerContractDbCommands } from './contract-db.js'
import { demoCommand } from './demo.js'
import { jobCancelCommand, jobRunCommand, jobStatusCommand } from './job.js'
import { CliError } from './output.js'
import { registerResourceCommands } from './resources.js'
import { initCommand, runCommand } from './run.js'

const defaultDataDir = process.env.DMS_DATA_DIR ?? join(homedir(), '.dms')
const defaultSocket = process.env.DMS_SOCKET ?? join(defaultDataDir, 'dms.sock')

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
    'run a node from a config file until SIGINT/SIGTERM (see specs/config.md); the key passphrase comes from DMS_PASSPHRASE or a prompt',
  )
  .requiredOption('-c, --config <file>', 'node config (JSON)')
  .option('--data-dir <dir>', "override the config's dataDir")
  .action((o: { config: string; dataDir?: string }) => runCommand(o))

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
  .option('--wait', 'follow the job until it ends; exit 2 unless it completed')
  .option('--json', 'print JSON')
  .option('--socket <path>', 'REST socket of the requester node', defaultSocket)
  .action((command: string[], o) => jobRunCommand(command, o as Parameters<typeof jobRunCommand>[1]))
job
  .command('status')
  .description("show a job's state, history, provider and settlement")
  .argument('<id>', 'job id')
  .option('--json', 'print JSON')
  .option('--socket <path>', 'REST socket of the requester node', defaultSocket)
  .action((id: string, o: { socket: string; json?: boolean }) => jobStatusCommand(id, o))
job
  .command('cancel')
  .description('cancel a job: the provider stops it and the contract pays the time used')
  .argument('<id>', 'job id')
  .option('--json', 'print JSON')
  .option('--socket <path>', 'REST socket of the requester node', defaultSocket)
  .action((id: string, o: { socket: string; json?: boolean }) => jobCancelCommand(id, o))

registerResourceCommands(program, defaultDataDir)
registerContractDbCommands(program)

program
  .command('demo')
  .description(
    'start a local network (contract-db, 2 providers, requester) as separate processes and run one job to settlement',
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
    process.stderr.write(`dms: ${err.message}\n`)
    process.exit(err.exitCode)
  }
  if (err instanceof DaemonNotRunningError) {
    process.stderr.write(`dms: ${err.message}\n`)
    process.exit(1)
  }
  process.stderr.write(
    `dms: unexpected error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  )
  process.exit(70)
})
