/** `dms blob put|get`: files in the requester node's blob store. */
import type { RegisterCommand } from './types.js'

const blobs = () => import('../blob.js')

export const registerBlob: RegisterCommand = (program, { socketOpt }) => {
  const blob = program
    .command('blob')
    .description('upload files to the node as blobs (job inputs by sha256), or download a blob')
  blob
    .command('put')
    .description('upload files (each up to 1 GiB); prints each sha256, to name in a spec\'s "inputs"')
    .argument('<file...>', 'local files')
    .option('--json', 'print JSON')
    .option(...socketOpt)
    .action(async (files: string[], o: { socket: string; json?: boolean }) =>
      (await blobs()).blobPutCommand(files, o),
    )
  blob
    .command('get')
    .description('download a blob by its sha256 (checked) to --out, or to stdout')
    .argument('<sha256>', 'blob id (64 hex digits)')
    .option('--out <file>', 'write it to this file')
    .option('--force', 'overwrite --out if it exists')
    .option('--json', 'print JSON')
    .option(...socketOpt)
    .action(async (sha256: string, o: { socket: string; json?: boolean; out?: string; force?: boolean }) =>
      (await blobs()).blobGetCommand(sha256, o),
    )
}
