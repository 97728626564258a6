/**
 * Production code sends and handles DMS messages only through the typed behaviours (`W`,
 * dms/protocol/behaviours.ts) and builds handles only with `handleOf`: no behaviour name strings,
 * no casts of a message's payload, no handle with an unchecked public key.
 */
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

const ROOT = join(import.meta.dirname, '..', '..', '..')

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const path = `${dir}/${e.name}`
    if (e.isDirectory()) return sources(path)
    return e.name.endsWith('.ts') ? [path] : []
  })
}

const RULES: Array<[RegExp, string]> = [
  [/\bexport const B\s*=/, 'a table of behaviour name strings (use W)'],
  [
    /\.(?:on|send|request|publish)(?:<[^>]*>)?\([^)]*?['"`]\/dms\//,
    'a behaviour named by a string (use W.x)',
  ],
  [/as Message</, 'a cast of a message (type the handler through W.x)'],
  [/(?:m|msg)\.payload as\b/, 'a cast of a payload (type the handler through W.x)'],
  [/publicKeyOfPeer\([^)]*\)\s+as\b/, 'an unchecked public key (use handleOf or publicKeyOf)'],
]

describe('the typed protocol is the only way to send (dms/)', () => {
  it('no behaviour name strings, message casts or unchecked handle keys in production code', () => {
    const found: string[] = []
    for (const file of sources('dms')) {
      const lines = readFileSync(join(ROOT, file), 'utf8').split('\n')
      lines.forEach((line, i) => {
        for (const [re, why] of RULES) if (re.test(line)) found.push(`${file}:${i + 1}: ${why}`)
      })
    }
    assert.deepEqual(found, [])
  })
})
