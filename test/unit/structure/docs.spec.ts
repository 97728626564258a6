/**
 * The docs a user reads stay inside the project (issue 20): every `*.md` file that README.md,
 * specs/, --help texts or code comments name exists in the repository (a reference to a file the
 * package does not ship leaves the reader nowhere).
 */
import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'

const ROOT = join(import.meta.dirname, '..', '..', '..')

function files(dir: string, ext: RegExp): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const path = `${dir}/${e.name}`
    if (e.isDirectory()) return files(path, ext)
    return ext.test(e.name) ? [path] : []
  })
}

describe('references to documents', () => {
  it('every *.md named in README, specs/, sources and scripts exists in the repository', () => {
    const sources = [
      'README.md',
      ...files('specs', /\.md$/),
      ...['actors', 'dms', 'proto', 'scripts', 'bin'].flatMap((d) => files(d, /\.(ts|js|sh)$/)),
    ]
    const missing: string[] = []
    for (const file of sources) {
      const text = readFileSync(join(ROOT, file), 'utf8')
      for (const m of text.matchAll(/(?<![\w/.-])((?:[\w.-]+\/)*[\w.-]+\.md)\b/g)) {
        const ref = m[1]
        const found = [join(ROOT, ref), join(ROOT, dirname(file), ref), join(ROOT, 'specs', ref)].some((p) =>
          existsSync(p),
        )
        if (!found) missing.push(`${file}: ${ref}`)
      }
    }
    assert.deepEqual(missing, [])
  })
})
