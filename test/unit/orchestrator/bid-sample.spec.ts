/**
 * The bid sample (dms/orchestrator/bid-sample.ts): the per-job order of the providers asked (a
 * hash nobody picks, the silent ones last), and the asks of a round (a sample, widened by doubling,
 * ending on gossip to everyone).
 */
import assert from 'node:assert/strict'
import { SamplePlan, sampleOrder, sampleRank, type Ask } from '../../../dms/orchestrator/bid-sample.js'

const peers = (n: number, prefix = 'peer') => Array.from({ length: n }, (_, i) => `${prefix}-${i}`)
const never = () => false

/** Every ask of a plan, until its gossip one. */
function asks(order: string[], sample: number): Ask[] {
  const plan = new SamplePlan(order, sample)
  const out: Ask[] = []
  for (let a = plan.next(); a !== undefined; a = plan.next()) out.push(a)
  return out
}

describe('orchestrator/bid-sample', () => {
  it('orders the peers by hash(jobId, peer): the same for a job whatever the input order, new for each job', () => {
    const all = peers(50)
    const a = sampleOrder('job-a', all, never)
    assert.deepEqual(sampleOrder('job-a', [...all].reverse(), never), a, 'input order does not matter')
    assert.deepEqual([...a].sort(), [...all].sort(), 'a permutation, nobody dropped')
    assert.notDeepEqual(sampleOrder('job-b', all, never), a, 'another job, another order')
    assert.deepEqual(sampleOrder('job-a', [...all, ...all.slice(0, 5)], never), a, 'no repeats')
  })

  it("a peer's place does not depend on the other peers (a provider cannot move another one)", () => {
    const all = peers(30)
    const before = sampleOrder('job-x', all, never)
    // Fifty more (e.g. a Sybil swarm) join: the first 30 keep their relative order.
    const after = sampleOrder('job-x', [...all, ...peers(50, 'sybil')], never).filter((p) => all.includes(p))
    assert.deepEqual(after, before)
    assert.equal(sampleRank('job-x', 'peer-1'), sampleRank('job-x', 'peer-1'))
  })

  it('puts the peers known to be silent last', () => {
    const silent = new Set(peers(20, 'mute'))
    const order = sampleOrder('job-s', [...peers(20, 'mute'), ...peers(10)], (p) => silent.has(p))
    assert.ok(order.slice(0, 10).every((p) => !silent.has(p)))
    assert.ok(order.slice(10).every((p) => silent.has(p)))
  })

  it('asks a sample, then twice as many, and ends on gossip once a batch would be half of the rest or more', () => {
    const order = sampleOrder('job-w', peers(100), never)
    const got = asks(order, 8)
    assert.deepEqual(
      got.map((a) => (a.kind === 'direct' ? a.peers.length : 'gossip')),
      [8, 16, 32, 'gossip'],
    )
    const direct = got.flatMap((a) => (a.kind === 'direct' ? a.peers : []))
    assert.deepEqual(direct, order.slice(0, 56), 'in the order, nobody asked twice directly')
  })

  it('a small network (at most twice the sample) or a sample of 0: gossip to everyone at once (the old behaviour)', () => {
    assert.deepEqual(asks(peers(16), 8), [{ kind: 'gossip' }])
    assert.deepEqual(asks(peers(3), 8), [{ kind: 'gossip' }])
    assert.deepEqual(asks([], 8), [{ kind: 'gossip' }])
    assert.deepEqual(asks(peers(1000), 0), [{ kind: 'gossip' }])
    assert.equal(asks(peers(17), 8)[0].kind, 'direct')
  })

  it('spreads the first batch evenly over the providers across jobs', () => {
    const all = peers(100)
    const firsts = new Map<string, number>(all.map((p) => [p, 0]))
    const jobs = 600
    for (let j = 0; j < jobs; j++) {
      const first = new SamplePlan(sampleOrder(`job-${j}`, all, never), 8).next()
      assert.equal(first?.kind, 'direct')
      if (first?.kind === 'direct') for (const p of first.peers) firsts.set(p, firsts.get(p)! + 1)
    }
    // Expected 48 each (8 of 100 for 600 jobs); the hash keeps every provider within 2x of it.
    const counts = [...firsts.values()]
    assert.ok(Math.min(...counts) > 24, `least asked first: ${Math.min(...counts)}`)
    assert.ok(Math.max(...counts) < 96, `most asked first: ${Math.max(...counts)}`)
  })
})
