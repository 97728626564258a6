/**
 * A process hosting some of `bench-market`'s providers (scripts/bench-market.ts, `--procs`), so
 * the providers' work runs beside the requester's rather than on its event loop. Driven over
 * stdin/stdout, one JSON line each way:
 *
 *   argv: <dataRoot> <contractDbPeer> <contractDbAddrsJson> <count> <firstIndex>
 *   out:  {"ready":[{"peer","addrs"}...]}            once every provider is up
 *   in:   approved  -> out {"approved":true}          each fetches its approval credential
 *   in:   stats     -> out {"cpuMs","delivered","bidAnswers"}
 *   in:   stop      -> stops every node and exits
 */
import '../actors/polyfill.js'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { NoopExecutor } from '../dms/executor/noop.js'
import { DmsNode } from '../dms/node.js'
import { W } from '../dms/protocol/behaviours.js'
import { prices, TEST_PASSPHRASE } from '../test/helpers/network.js'

const MiB = 1024 * 1024
const [root, cdbPeer, cdbAddrsJson, countArg, firstArg] = process.argv.slice(2)
const cdbAddrs = JSON.parse(cdbAddrsJson) as string[]
const count = Number(countArg)
const first = Number(firstArg)

const out = (o: unknown) => process.stdout.write(`${JSON.stringify(o)}\n`)
let bidAnswers = 0
const nodes: DmsNode[] = []
const executor = new NoopExecutor()
for (let i = first; i < first + count; i++) {
  const node = new DmsNode(
    {
      dataDir: join(root, `provider-${i}`),
      oneHost: true,
      bootstrap: cdbAddrs,
      provider: {
        contractDb: cdbPeer,
        offer: {
          cpu: 64,
          memoryBytes: 64 * 1024 * MiB,
          diskBytes: 16 * 1024 * MiB,
          gpus: 0,
          prices: prices(1000 + i),
        },
      },
    },
    { passphrase: TEST_PASSPHRASE, executor },
  )
  await node.start()
  // Bench instrumentation: the bids and declines this provider sends.
  const send = node.system.sendEnvelope.bind(node.system)
  node.system.sendEnvelope = (actor, to, behaviour, payload, opts) => {
    if (behaviour === W.bid.name || behaviour === W.decline.name) bidAnswers++
    return send(actor, to, behaviour, payload, opts)
  }
  nodes.push(node)
}
out({ ready: nodes.map((n) => ({ peer: n.peerId, addrs: n.addrs() })) })

for await (const line of createInterface({ input: process.stdin })) {
  if (line === 'approved') {
    for (const n of nodes) await n.approvals.get(cdbPeer)?.refresh()
    out({ approved: nodes.every((n) => n.approvals.get(cdbPeer)?.current() !== undefined) })
  } else if (line === 'stats') {
    const u = process.cpuUsage()
    out({
      cpuMs: (u.user + u.system) / 1000,
      delivered: nodes.reduce((s, n) => s + n.system.metrics().delivered, 0),
      bidAnswers,
    })
  } else if (line === 'stop') {
    for (const n of nodes) await n.stop()
    process.exit(0)
  }
}
