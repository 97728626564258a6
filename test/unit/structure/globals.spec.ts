/**
 * Test hooks come in through the node's components, not from globals: no part reads
 * `process.env` (the fault points DMS_FAULT_* included). The process entries (dms/cli/) read the
 * environment once and pass what it asks for down (dms/test-hooks.ts); log.ts and keys.ts take
 * the environment as a parameter whose default is it.
 */
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

const ROOT = join(import.meta.dirname, '../../..')

/** Where the environment may be read. */
const ENTRIES = [/^dms\/cli\//, /^dms\/log\.ts$/, /^dms\/keys\.ts$/]

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const path = `${dir}/${e.name}`
    if (e.isDirectory()) return sourceFiles(path)
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [path] : []
  })
}

const readsEnv = (text: string) =>
  /\bprocess\.env\b/.test(text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, ''))

describe('test hooks are components, not globals', () => {
  it('no part reads process.env: only the process entries do', () => {
    const found = ['actors', 'dms']
      .flatMap(sourceFiles)
      .filter((f) => !ENTRIES.some((e) => e.test(f)))
      .filter((f) => readsEnv(readFileSync(join(ROOT, f), 'utf8')))
    assert.deepEqual(found, [])
  })

  it('the rule catches what it is for', () => {
    assert.ok(readsEnv('const v = env[X] ?? process.env[X]'))
    assert.ok(!readsEnv('/** read from `process.env` by the entry */\nconst v = hooks.x'))
  })
})
