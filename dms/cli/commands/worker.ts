/** `dms worker register|list`: workers and the function table on the requester (specs/functions.md). */
import type { Opts } from '../worker.js'
import type { RegisterCommand } from './types.js'

const workers = () => import('../worker.js')

export const registerWorker: RegisterCommand = (program, { socketOpt }) => {
  const worker = program
    .command('worker')
    .description('workers: programs by content hash and the functions they implement (register, list)')
  worker
    .command('register')
    .description(
      'register the worker in DIR/worker.json (files may leave out sha256 and size: read from DIR); uploads only the blobs the node lacks',
    )
    .argument('<dir>', 'a folder holding worker.json and the files it names')
    .option('--json', 'print JSON')
    .option(...socketOpt)
    .action(async (dir: string, o: Opts) => (await workers()).workerRegisterCommand(dir, o))
  worker
    .command('list')
    .alias('ls')
    .description('the workers registered on the node, oldest first (--json: with the function table)')
    .option('--json', 'print JSON')
    .option(...socketOpt)
    .action(async (o: Opts) => (await workers()).workerListCommand(o))
}
