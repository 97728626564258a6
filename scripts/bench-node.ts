/**
 * Benchmarks only: one DMS node in its own process, from a config file, with the NoopExecutor (no
 * container engine), so a benchmark can spread many providers over separate processes and cores.
 * Prints the same ready line as `dms run`; SIGTERM stops it.
 *
 *   node --import tsx --import ./actors/polyfill.ts scripts/bench-node.ts node.json
 */
import '../actors/polyfill.js'
import { readFile } from 'node:fs/promises'
import type { NodeConfig } from '../dms/config.js'
import { NoopExecutor } from '../dms/executor/noop.js'
import { DmsNode } from '../dms/node.js'

const cfg = JSON.parse(await readFile(process.argv[2] ?? '', 'utf8')) as NodeConfig
const node = new DmsNode(cfg, { executor: new NoopExecutor(), passphrase: () => Promise.resolve('bench') })
await node.start()
process.stdout.write(
  `${JSON.stringify({ event: 'ready', peerId: node.peerId, addrs: node.addrs(), socket: node.socketPath ?? null })}\n`,
)
process.once('SIGTERM', () => void node.stop().then(() => process.exit(0)))
