/**
 * How long the requester takes to notice failures, in real time (the tests check what happens;
 * this measures when):
 *
 *   node --import tsx --import ./actors/polyfill.ts scripts/bench-failover.ts [--quick]
 *   env: BENCH_RUNS (kills measured, default 3; --quick: 1)
 *
 * 1. provider killed: the running provider, its own `dms run` process with real Docker, is
 *    SIGKILLed mid-job (the scenario of test/e2e/failover.spec.ts). Measured: kill -> dropped
 *    (its contract terminated PROVIDER_FAULT) and kill -> completed on the other provider. The
 *    bound is the liveness timeout (`requester.livenessTimeoutMs`, 6 s by default) plus the time
 *    the termination takes.
 * 2. re-publish: a bid request lost (a provider that ignores the first one) is published again
 *    after its window and the first backoff (the scenario of
 *    test/integration/orchestrator/republish.spec.ts, window 1 s, backoff 1 s). Measured: the
 *    gap between the two requests as the provider received them.
 */
import '../actors/polyfill.js'
import { execFileSync } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { cpus, loadavg } from 'node:os'
import { join } from 'node:path'
import type { NodeConfig } from '../dms/config.js'
import { DockerExecutor } from '../dms/executor/docker/docker-executor.js'
import { silentLogger } from '../dms/log.js'
import { parseJobSpec } from '../dms/orchestrator/job-spec.js'
import { W } from '../dms/protocol/behaviours.js'
import { BID_REQUEST_TOPIC, INBOX } from '../dms/protocol/handles.js'
import type { Decline } from '../dms/protocol/messages.js'
import { jobReaches, prices, startNetwork, TEST_IMAGE } from '../test/helpers/network.js'
import { startPeer } from '../test/helpers/peers.js'
import { peerIdOfDataDir, startDms } from '../test/helpers/processes.js'

const QUICK = process.argv.includes('--quick')
const RUNS = Number(process.env.BENCH_RUNS ?? (QUICK ? 1 : 3))
const MiB = 1024 * 1024

// Bounded: whatever happens, the process ends.
setTimeout(() => {
  console.error('bench-failover: 10 minutes passed, exiting')
  process.exit(3)
}, 10 * 60_000).unref()

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

/** One kill of the running provider: [kill -> dropped, kill -> completed] in ms. */
async function providerKilled(run: number): Promise<[number, number]> {
  const net = await startNetwork([{ cpu: 1, memoryBytes: 512 * MiB, perCpuHour: 3000 }], {
    requester: { enoughBids: 2 },
  })
  const dataDir = join(net.root, 'provider-proc')
  try {
    const config: NodeConfig = {
      dataDir,
      oneHost: true,
      api: false,
      bootstrap: [...net.contractDb.addrs(), ...net.requester.addrs()],
      provider: {
        contractDb: net.contractDb.peerId,
        offer: { cpu: 1, memoryBytes: 512 * MiB, diskBytes: 256 * MiB, gpus: 0, prices: prices(1000) },
      },
    }
    await writeFile(join(net.root, 'provider.json'), JSON.stringify(config))
    await net.contractDb.service.approve(await peerIdOfDataDir(dataDir))
    const doomed = await startDms(join(net.root, 'provider.json'), 'warn')
    try {
      await net.requester.transport.waitForTopicPeers(BID_REQUEST_TOPIC, 2)
      const orch = net.requester.orchestrator!
      const posted = await orch.post(
        parseJobSpec({
          image: TEST_IMAGE,
          command: ['sh', '-c', 'echo start; sleep 1; echo done'],
          resources: { cpu: 1, memory: '64MiB' },
          maxDuration: 60,
          maxPrice: 1_000_000,
        }),
      )
      const id = posted.record.id
      await new Promise<void>((resolve) => {
        const off = orch.onUpdate((jobId, u) => {
          if (jobId === id && u.state === 'running') {
            off()
            resolve()
          }
        })
      })
      const killedAt = Date.now()
      doomed.child.kill('SIGKILL')
      await doomed.exited
      const job = await jobReaches(net.requester, id)
      const doneAt = Date.now()
      const attempt = job.record.attempts?.[0]
      if (job.state !== 'completed' || attempt?.provider !== doomed.peerId)
        throw new Error(`run ${run}: ${job.state} ${JSON.stringify(job.record.error)}`)
      return [attempt.at - killedAt, doneAt - killedAt]
    } finally {
      doomed.child.kill('SIGKILL')
      await doomed.exited
      const ex = new DockerExecutor(
        { log: silentLogger },
        { workDir: join(dataDir, 'work'), owner: doomed.peerId },
      )
      for (const m of await ex.listRuns()) await ex.removeAllocation(m.allocationId)
    }
  } finally {
    await net.stop()
  }
}

/** The gap between a lost bid request and its re-publication, in ms, as the provider saw them. */
async function republishGap(): Promise<number> {
  const net = await startNetwork([], { requester: { bidWindowMs: 1000 } })
  const peer = await startPeer(net.requester.addrs())
  try {
    await net.contractDb.service.approve(peer.system.peerId)
    const approval = await net.contractDb.service.approvalFor(peer.system.peerId)
    const seen: number[] = []
    const actor = peer.system.spawn(INBOX.provider, peer.key)
    actor.subscribe(BID_REQUEST_TOPIC).on(W.bidRequest, async (m) => {
      seen.push(Date.now())
      if (seen.length < 2) return // as if the first request was lost
      const decline: Decline = {
        jobId: m.payload.jobId,
        provider: peer.system.peerId,
        reasons: ['late'],
        approval,
      }
      await actor.send(m.from, W.decline, decline)
    })
    await net.requester.transport.waitForTopicPeers(BID_REQUEST_TOPIC, 1)
    const posted = await net.requester.orchestrator!.post(
      parseJobSpec({
        image: TEST_IMAGE,
        command: ['true'],
        resources: { cpu: 1, memory: '64MiB' },
        maxDuration: 60,
        maxPrice: 1000,
      }),
    )
    await jobReaches(net.requester, posted.record.id)
    return seen[1] - seen[0]
  } finally {
    await peer.stop()
    await net.stop()
  }
}

execFileSync('bash', ['scripts/build-test-image.sh'], { stdio: 'inherit' })
console.log(`bench-failover: ${cpus().length} cores, load ${loadavg()[0].toFixed(2)}, ${RUNS} run(s)`)

const dropped: number[] = []
const completed: number[] = []
for (let i = 0; i < RUNS; i++) {
  const [d, c] = await providerKilled(i)
  dropped.push(d)
  completed.push(c)
  console.log(`  provider killed, run ${i + 1}: dropped after ${d} ms, completed elsewhere after ${c} ms`)
}
const gaps: number[] = []
for (let i = 0; i < RUNS; i++) gaps.push(await republishGap())

console.log('')
console.log('| measure (ms, real time)                                    | median |  max |')
console.log('| ---------------------------------------------------------- | -----: | ---: |')
const row = (name: string, xs: number[]) =>
  console.log(
    `| ${name.padEnd(58)} | ${String(median(xs)).padStart(6)} | ${String(Math.max(...xs)).padStart(4)} |`,
  )
row('provider SIGKILLed -> dropped (liveness 6000 ms)', dropped)
row('provider SIGKILLed -> job completed on another provider', completed)
row('lost bid request -> published again (window 1000 + 1000)', gaps)
process.exit(0)
