#!/usr/bin/env node
// The `dms` command. Runs the built CLI, dist/cli/main.js: the compiled code bundled by
// scripts/build-cli.ts (npm run build); see README.md.
import { setFlagsFromString } from 'node:v8'
import { heapFlags } from './heap-flags.js'

// Before anything is loaded: the young generation's size of a process that stays up
// (heap-flags.js; NODE_OPTIONS wins).
for (const flag of heapFlags(process.env.NODE_OPTIONS, process.execArgv, process.argv.slice(2)))
  setFlagsFromString(flag)

import('../dist/cli/main.js').catch((err) => {
  if (err && err.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes('dist/cli/main.js')) {
    console.error('dms: not built yet: run `npm ci && npm run build` in the project folder first')
    process.exit(1)
  }
  throw err
})
