/**
 * Separate hosts in network namespaces (scripts/netns-devnet.ts): a public relay (also the
 * contract-db and a DHT server), a public requester, and a provider behind a MASQUERADE NAT with no
 * inbound port; real processes, real Docker. The requester is told only the relay's address.
 */
import assert from 'node:assert/strict'
import { execFile, spawnSync } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { promisify } from 'node:util'
import { netnsUnavailable, PREFIX, removeStale } from '../../scripts/netns.js'
import { startNetnsDevnet, type NetnsDevnet } from '../../scripts/netns-devnet.js'
import { TEST_IMAGE } from '../helpers/network.js'

const exec = promisify(execFile)

/** `dms peers` (the built CLI) on the node's socket: the provider's line. */
async function peersLine(socket: string, peer: string): Promise<string> {
  const { stdout } = await exec(process.execPath, ['bin/dms.js', 'peers', '--socket', socket])
  return stdout.split('\n').find((l) => l.startsWith(peer)) ?? ''
}

interface Peer {
  peerId: string
  roles?: string[]
  connection?: string
  latencyMs?: number
}

const job = {
  name: 'behind-nat',
  image: TEST_IMAGE,
  command: ['sh', '-c', 'echo from behind the NAT'],
  resources: { cpu: 0.5, memory: '64MiB' },
  maxDuration: 60,
  maxPrice: 10_000,
  // A provider just reconnected (restarted, or its connection upgraded) may not be in the bid
  // topic's mesh at the first round: the job waits in `queued` and bids again as soon as the
  // provider is a live subscriber again (a join wakes queued jobs: specs/queueing.md), as a
  // user's would; the queue timeout only bounds that wait.
  queueTimeout: 30,
}

describe('separate hosts in network namespaces, a provider behind NAT (real Docker)', function () {
  this.timeout(90_000)
  let net: NetnsDevnet | undefined

  before(async function () {
    const why = await netnsUnavailable()
    if (why !== undefined) {
      // eslint-disable-next-line no-console -- the stated reason for the skip
      console.warn(`skipping the network namespace tests: ${why}`)
      this.skip()
    }
    // Hole punching off at first: the provider stays reachable only through the relay.
    net = await startNetnsDevnet({ holePunching: false })
  })
  after(async () => net?.stop())
  afterEach(async function () {
    if (this.currentTest?.state !== 'failed' || net === undefined) return
    // What each process logged last: the failure's context (the logs go with the temp dir).
    for (const p of [net.relay, net.requester, net.provider]) {
      const text = await readFile(p.logPath, 'utf8').catch(() => '')
      process.stderr.write(`--- ${p.name} (${p.logPath})\n${text.split('\n').slice(-25).join('\n')}\n`)
    }
  })

  const peerView = async (n: NetnsDevnet, peer: string) =>
    (await n.api.ok<{ peers: Peer[] }>('GET', '/v1/peers')).peers.find((p) => p.peerId === peer)

  const runJob = async (n: NetnsDevnet) => {
    const posted = await n.api.ok<{ id: string }>('POST', '/v1/jobs', job)
    await n.requester.logLine((l) => l.msg === 'job finished' && l.jobId === posted.id)
    return n.api.ok<{
      state: string
      winner?: { provider: string }
      error?: unknown
      result?: { stdout: string }
    }>('GET', `/v1/jobs/${posted.id}`)
  }

  it('finds the NATed provider through the DHT and runs a job through the relay', async () => {
    const n = net!
    // The requester was given only the relay: the provider is found through the DHT, over the relay.
    await n.requester.logLine(
      (l) => l.msg === 'found a provider through the DHT' && l.peer === n.provider.peerId,
      0,
    )
    await n.requester.logLine((l) => l.msg === 'relayed connection opened' && l.peer === n.provider.peerId, 0)
    assert.equal((await peerView(n, n.provider.peerId))?.connection, 'relayed')
    assert.match(await peersLine(n.requester.socket, n.provider.peerId), /provider\s+relayed/)
    const done = await runJob(n)
    assert.equal(done.state, 'completed', JSON.stringify(done.error))
    assert.equal(done.winner?.provider, n.provider.peerId)
    assert.match(done.result?.stdout ?? '', /from behind the NAT/, 'its output came back through the relay')
    const after = await peerView(n, n.provider.peerId)
    assert.equal(after?.connection, 'relayed', 'still only through the relay')
    assert.deepEqual(after?.roles, ['provider'])
    assert.deepEqual((await peerView(n, n.relay.peerId))?.roles, ['contract-db', 'relay'])
  })

  it('with hole punching the relayed connection becomes direct, `dms peers` shows it, and a job runs', async () => {
    const n = net!
    const since = n.requester.lineCount()
    const provider = await n.restartProvider({ holePunching: true })
    // Reached again through the relay, the NATed provider dials the public requester back (DCUtR).
    await n.requester.logLine(
      (l) => l.msg === 'relayed connection opened' && l.peer === provider.peerId,
      since,
    )
    await n.requester.logLine(
      (l) => l.msg === 'relayed connection upgraded to direct' && l.peer === provider.peerId,
      since,
    )
    const view = await peerView(n, provider.peerId)
    assert.equal(view?.connection, 'direct')
    assert.match(await peersLine(n.requester.socket, provider.peerId), /provider\s+direct/)
    const done = await runJob(n)
    assert.equal(done.state, 'completed', JSON.stringify(done.error))
    assert.equal(done.winner?.provider, provider.peerId)
  })

  it('a provider killed (SIGKILL) and restarted bids again, with no re-configuration', async () => {
    const n = net!
    const old = n.provider
    old.child.kill('SIGKILL')
    await old.exited
    const back = n.requester.logLine(
      (l) =>
        l.peer === old.peerId &&
        (l.msg === 're-dialled a peer' ||
          l.msg === 'found a provider through the DHT' ||
          l.msg === 'relayed connection opened'),
    )
    const provider = await n.restartProvider({ holePunching: true })
    const how = await back
    assert.ok(how.msg !== undefined)
    const done = await runJob(n)
    assert.equal(done.state, 'completed', JSON.stringify(done.error))
    assert.equal(done.winner?.provider, provider.peerId)
  })

  it('removes the namespaces a crashed run left behind (at the next start)', async () => {
    const dead = spawnSync(process.execPath, ['-e', '0']).pid
    const stale = `${PREFIX}${dead}-stale`
    await exec('ip', ['netns', 'add', stale])
    assert.ok((await removeStale()).includes(stale))
    const { stdout } = await exec('ip', ['netns', 'list'])
    assert.ok(!stdout.split('\n').some((l) => l.startsWith(stale)))
  })
})
