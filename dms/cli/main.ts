#!/usr/bin/env node
import '../../actors/polyfill.js'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { Command } from 'commander'
import { DaemonNotRunningError, RouteMissingError } from '../api/client.js'
import { COMMANDS } from './commands/index.js'
import { addOutputOptions, CliError, terminalSafe } from './output.js'
import { oneLineUsageErrors } from './usage-errors.js'

const defaultDataDir = process.env.DMS_DATA_DIR ?? join(homedir(), '.dms')
const defaultSocket = process.env.DMS_SOCKET || process.env.DMS_API_SOCKET || join(defaultDataDir, 'dms.sock')

// A reader that stops early (`dms job list | head -1`) closes the pipe: that ends the output, not
// an error worth a stack trace.
for (const stream of [process.stdout, process.stderr])
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(0)
    throw err
  })

const program = new Command('dms')
  .description('DMS: a peer-to-peer compute marketplace agent')
  .version('0.1.0')

const socketOpt: [string, string, string] = [
  '--socket <path>',
  'REST socket of the node (env DMS_SOCKET)',
  defaultSocket,
]
for (const register of COMMANDS) register(program, { defaultDataDir, socketOpt })
addOutputOptions(program)
oneLineUsageErrors(program)

program.parseAsync(process.argv).catch((err: unknown) => {
  if (err instanceof CliError) {
    // Messages may quote what a server or a peer said: shown, never interpreted by the terminal.
    process.stderr.write(`dms: ${terminalSafe(err.message)}\n`)
    process.exit(err.exitCode)
  }
  if (err instanceof DaemonNotRunningError || err instanceof RouteMissingError) {
    process.stderr.write(`dms: ${terminalSafe(err.message)}\n`)
    process.exit(1)
  }
  // One line by default; the stack with DMS_LOG_LEVEL=debug (or trace).
  const debug = ['debug', 'trace'].includes(process.env.DMS_LOG_LEVEL ?? '')
  const text = err instanceof Error ? (debug ? (err.stack ?? err.message) : err.message) : String(err)
  process.stderr.write(`dms: unexpected error: ${terminalSafe(debug ? text : text.split('\n')[0])}\n`)
  process.exit(70)
})
