/**
 * Prints the state machines' mermaid diagrams, generated from their xstate definitions; with
 * `--write`, rewrites the generated blocks of specs/state-machines.md.
 *   npx tsx scripts/machine-diagrams.ts [--write]
 */
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { DIAGRAMS, withDiagrams } from '../dms/machines/diagrams.js'

const spec = join(import.meta.dirname, '../specs/state-machines.md')
if (process.argv.includes('--write')) {
  await writeFile(spec, withDiagrams(await readFile(spec, 'utf8')))
  console.log(`rewrote ${spec}`)
} else for (const [name, make] of Object.entries(DIAGRAMS)) console.log(`## ${name}\n${make()}\n`)
