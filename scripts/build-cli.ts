/**
 * Bundles the compiled CLI (dist/dms/cli/main.js, from tsc) and the packages it imports into
 * dist/cli/: minified ES modules, split into chunks so that what a command imports lazily (a
 * role's code, the kad-dht, mDNS, each command's module) stays a separate file loaded only when
 * used. bin/dms.js runs dist/cli/main.js. Part of `npm run build`, after tsc.
 *
 * Why: a node that loads ~1 400 small modules keeps each one's source, module record and scope in
 * V8's heap; the bundle holds the same code in ~70 files and far fewer bytes, about 14 MB less
 * idle RSS for a provider (specs/benchmarks.md, "Idle memory").
 *
 * Left out of the bundle, loaded from node_modules at run time as before:
 * - classic-level: a native addon that finds its binary from its own folder;
 * - dockerode: loaded through createRequire after the stand-ins for its ssh and BuildKit parts
 *   (dms/executor/docker/dockerode.ts), which must land in Node's module cache first;
 * - systeminformation: loaded at the first measurement only, and it reads its own platform files.
 *
 * Replaced by stand-ins that fail if called: noise's WebAssembly ciphers
 * (@chainsafe/as-chacha20poly1305, @chainsafe/as-sha256), 1.2-1.5 MB of RSS once loaded, which
 * DMS's cipher suite never calls (dms/network/noise-crypto.ts).
 */
import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import { build, type Plugin } from 'esbuild'

const root = join(import.meta.dirname, '..')
const out = join(root, 'dist', 'cli')

/** Packages run from node_modules, not bundled (see above). */
const EXTERNAL = ['classic-level', 'dockerode', 'systeminformation']

/** What noise's crypto/index.js imports of them; calling any of it fails. */
const WASM_STAND_IN = `
class NoiseWasmLeftOut extends Error {
  name = 'NoiseWasmLeftOut'
  code = 'NOISE_WASM_LEFT_OUT'
}
const left = () => {
  throw new NoiseWasmLeftOut('noise WebAssembly cipher left out of the dms bundle: dms/network/noise-crypto.ts')
}
export const newInstance = () => undefined
export class ChaCha20Poly1305 { seal() { left() } open() { left() } }
export const digest = left
`
const wasmStandIns: Plugin = {
  name: 'noise-wasm-stand-ins',
  setup(b) {
    b.onResolve({ filter: /^@chainsafe\/as-(chacha20poly1305|sha256)$/ }, (a) => ({
      path: a.path,
      namespace: 'stand-in',
    }))
    b.onLoad({ filter: /.*/, namespace: 'stand-in' }, () => ({ contents: WASM_STAND_IN, loader: 'js' }))
  },
}

await rm(out, { recursive: true, force: true })
await build({
  entryPoints: { main: join(root, 'dist', 'dms', 'cli', 'main.js') },
  outdir: out,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  minify: true,
  // Class and function names stay as written: errors are told apart by `name`, and stack traces
  // keep them. Positions map back to dist/ and the TypeScript with `node --enable-source-maps`.
  keepNames: true,
  sourcemap: 'linked',
  legalComments: 'none',
  external: EXTERNAL,
  plugins: [wasmStandIns],
  // CommonJS packages in the bundle call require() for Node's built-ins and the packages above.
  banner: {
    js: "import { createRequire as __dmsRequire } from 'node:module'; const require = __dmsRequire(import.meta.url);",
  },
  logLevel: 'warning',
})
