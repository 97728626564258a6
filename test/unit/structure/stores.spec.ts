/**
 * The stored layout, checked: every table of the database is declared once, in
 * dms/store/tables.ts (`STORES`), with a record version; no source opens a sublevel by a name
 * written anywhere else, so no two parts can take the same name unseen.
 */
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { STORES } from '../../../dms/store/tables.js'

const ROOT = join(import.meta.dirname, '../../..')
const TABLE = 'dms/store/tables.ts'

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const path = `${dir}/${e.name}`
    if (e.isDirectory()) return sourceFiles(path)
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [path] : []
  })
}

/** A sublevel opened by a name written in place: `sublevel('x'`, `new Repo(db, 'x'`, `subOf(db, 'x'`. */
const LITERAL_NAME =
  /\bsublevel\s*(?:<[^>]*>)?\(\s*['"`]|\b(?:new\s+Repo|subOf)\s*(?:<[^>]*>)?\(\s*[^,()]+,\s*['"`]/g

function literalNames(text: string): string[] {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '')
  return [...code.matchAll(LITERAL_NAME)].map((m) => m[0])
}

describe('the stored layout (dms/store/tables.ts)', () => {
  const files = ['actors', 'dms'].flatMap(sourceFiles).filter((f) => f !== TABLE)

  it('no source opens a sublevel by a literal name: every name comes from STORES', () => {
    const found = files.flatMap((f) =>
      literalNames(readFileSync(join(ROOT, f), 'utf8')).map((m) => `${f}: ${m}`),
    )
    assert.deepEqual(found, [])
  })

  it('every table has its own name and a record version', () => {
    const names = Object.values(STORES).map((t) => t.name)
    assert.equal(new Set(names).size, names.length, `a name taken twice: ${names.join(', ')}`)
    for (const t of Object.values(STORES)) assert.ok(Number.isInteger(t.version) && t.version >= 1, t.name)
  })

  it('every table is opened by some source (none left over)', () => {
    const text = files.map((f) => readFileSync(join(ROOT, f), 'utf8')).join('\n')
    const unused = Object.keys(STORES).filter((k) => !text.includes(`STORES.${k}.`))
    assert.deepEqual(unused, [])
  })

  it('the rule catches what it is for', () => {
    assert.equal(literalNames(`new Repo(c.db, 'jobs')`).length, 1)
    assert.equal(literalNames(`new Repo<Offer>(this.db, "offer")`).length, 1)
    assert.equal(literalNames(`db.sublevel<string, string>('job-index', {})`).length, 1)
    assert.equal(literalNames(`subOf(db, 'x')`).length, 1)
    assert.equal(literalNames(`new Repo(c.db, STORES.jobs.name)`).length, 0)
    assert.equal(literalNames(`// new Repo(db, 'jobs')`).length, 0)
  })
})
