/**
 * Builds the dashboards (dashboard/, Preact) into dist/dashboard/: one bundled, minified script
 * per page (the node's app.js, the contract-db operator's operator.js), the style sheet and the
 * pages. Part of `npm run build`; everything a page loads ships in the package
 * (specs/dashboard.md, "Build").
 */
import { copyFile, mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { build } from 'esbuild'

const root = join(import.meta.dirname, '..')
const out = join(root, 'dist', 'dashboard')
await mkdir(out, { recursive: true })
// The node's page (app.js) and the contract-db operator's (operator.js), one bundle each.
await build({
  entryPoints: [
    { in: join(root, 'dashboard', 'main.tsx'), out: 'app' },
    { in: join(root, 'dashboard', 'operator.tsx'), out: 'operator' },
  ],
  outdir: out,
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
await copyFile(join(root, 'dashboard', 'operator.html'), join(out, 'operator.html'))
