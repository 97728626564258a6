/** `dms onboard`, `dms offboard`, `dms resources`: the provider's offer (specs/resources.md). */
import type { Command } from 'commander'
import type { OnboardOptions, Target } from '../resources.js'
import type { RegisterCommand } from './types.js'

const resources = () => import('../resources.js')

export const registerResources: RegisterCommand = (program, { defaultDataDir }) => {
  const target = (c: Command) =>
    c
      .option('--data-dir <dir>', 'data directory of the provider node', defaultDataDir)
      .option('--socket <path>', "REST socket of the running node (default: '<data-dir>/dms.sock')")
      .option('--json', 'print JSON')
  target(
    program
      .command('onboard')
      .description(
        'offer a share of this machine (or change the offer); refuses more than the machine minus the host reserve',
      )
      .option(
        '--cpu <cores>',
        'CPU cores, e.g. 2 or 0.5 (default: current offer, else all the machine allows)',
      )
      .option('--memory <size>', 'memory, e.g. 4GiB (default: current offer, else all the machine allows)')
      .option('--disk <size>', 'disk, e.g. 20GiB (default: current offer, else 10GiB)')
      .option('--gpu <indices>', 'GPUs offered, e.g. 0,1, or "none" (default: current offer, else none)')
      .option('--price-cpu <n>', 'micro-tokens per core-hour (default: current, else 1000)')
      .option('--price-memory <n>', 'micro-tokens per GiB-hour of memory (default: current, else 100)')
      .option('--price-disk <n>', 'micro-tokens per GiB-hour of disk (default: current, else 1)')
      .option('--price-gpu <n>', 'micro-tokens per GPU-hour (default: current, else 10000)')
      .option('--min-price <n>', 'lowest price of any job, micro-tokens (default: current, else 1)')
      .option(
        '--price-per-result <n>',
        "bid this price (micro-tokens) per verified result instead of per hour: written into --config's provider.price",
      )
      .option(
        '--price-fixed <n>',
        "bid this fixed price (micro-tokens) for a whole job, whatever its exit: written into --config's provider.price",
      )
      .option(
        '-c, --config <file>',
        "the node's config file: the price model flags set its provider.price, the per-hour flags remove it (read at the node's next start); its dataDir is the target unless --data-dir is given",
      ),
  ).action(async (o: OnboardOptions, cmd: Command) =>
    (await resources()).onboardCommand({ ...o, dataDirGiven: cmd.getOptionValueSource('dataDir') === 'cli' }),
  )
  target(
    program
      .command('offboard')
      .description('withdraw the offer: no new bids; reserved, locked and running work finishes'),
  ).action(async (o: Target) => (await resources()).offboardCommand(o))
  target(
    program
      .command('resources')
      .description('show the machine, the offer, and what is free, reserved, locked and allocated')
      .option('--refresh', 'measure the machine again'),
  ).action(async (o: Target & { refresh?: boolean }) => (await resources()).resourcesCommand(o))
}
