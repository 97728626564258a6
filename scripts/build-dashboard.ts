/**
 * Builds the dashboard (dashboard/, Preact) into dist/dashboard/: one bundled, minified script,
 * its style sheet and the page. Part of `npm run build`; everything the page loads ships in the
 * package (specs/dashboard.md, "Build").
 */
import { copyFile, mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { build } from 'esbuild'

const root = join(import.meta.dirname, '..')
const out = join(root, 'dist', 'dashboard')
await mkdir(out, { recursive: true })
await build({
  entryPoints: [join(root, 'dashboard', 'main.tsx')],
  outfile: join(out, 'app.js'),
  bundle: true,
  minify: true,
  format: 'esm',
  target: 'es2022',
  jsx: 'automatic',
  jsxImportSource: 'preact',
  legalComments: 'none',
  logLevel: 'warning',
})
await copyFile(join(root, 'dashboard', 'app.css'), join(out, 'app.css'))
await copyFile(join(root, 'dashboard', 'index.html'), join(out, 'index.html'))
