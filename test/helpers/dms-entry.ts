/**
 * How a test starts `dms` in a process of its own: the built command (`bin/dms.js`, what users
 * run) when dist/ is up to date with the sources, else the sources through tsx. The built one
 * starts with a third of the CPU (about 1.5 s against 4-5 s of tsx compiling each module on a
 * loaded 2-core machine), and `npm test` always builds first; a developer who edited a source and
 * runs one spec file gets the sources, never a stale build.
 */
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'

const ROOT = join(import.meta.dirname, '../..')
/** What scripts/build-if-stale.sh stamps after a build, and the inputs it compares with it. */
const STAMP = 'dist/.dms-build-stamp'
const INPUTS = [
  'actors',
  'dms',
  'proto',
  'dashboard',
  'scripts/build-cli.ts',
  'package.json',
  'tsconfig.json',
]

let fresh: boolean | undefined

/** Whether dist/ was built after every change to what it is built from (as build-if-stale.sh decides). */
export function builtIsFresh(): boolean {
  if (fresh !== undefined) return fresh
  if (!existsSync(join(ROOT, STAMP)) || !existsSync(join(ROOT, 'dist/cli/main.js'))) return (fresh = false)
  const newer = execFileSync('find', [...INPUTS, '-newer', STAMP, '-print', '-quit'], {
    cwd: ROOT,
    encoding: 'utf8',
  })
  return (fresh = newer.trim() === '')
}

/** Node's arguments before the command's own (`run --config ...`). */
export function dmsEntry(): string[] {
  return builtIsFresh() ? [join(ROOT, 'bin/dms.js')] : ['--import', 'tsx', join(ROOT, 'dms/cli/main.ts')]
}
