/**
 * Removes a folder a job wrote, however deep. A job can nest folders past PATH_MAX (each call it
 * makes is relative), which Node's `fs.rm` cannot remove (ENAMETOOLONG); GNU `rm` walks with
 * file descriptors and can. `--one-file-system`: never through a mount left inside.
 */
import { execFile as execFileCb } from 'node:child_process'
import { promises as fs } from 'node:fs'
import { promisify } from 'node:util'

const execFile = promisify(execFileCb)

export async function removeTree(dir: string): Promise<void> {
  try {
    await fs.rm(dir, { recursive: true, force: true })
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENAMETOOLONG') throw err
    await execFile('rm', ['-rf', '--one-file-system', '--', dir])
  }
}
