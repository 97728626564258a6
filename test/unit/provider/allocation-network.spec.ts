/**
 * The network a run gets is the provider's to allow, at the run itself: an allocation that asked
 * for it while `allowNetwork` was on, restored after a restart with it off, runs without.
 */
import { forTerms, member as podMember } from '../../helpers/workload.js'
import type { WorkloadMember } from '../../../dms/workload/workload.js'
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createActor } from 'xstate'
import { ManualClock } from '../../../actors/clock.js'
import type { Actor } from '../../../actors/system.js'
import type { BlobService } from '../../../dms/blobs/service.js'
import type { Engine } from '../../../dms/executor/engine.js'
import type { ExecutionSpec } from '../../../dms/executor/executor.js'
import { notStarted } from '../../../dms/executor/outputs.js'
import { silentLogger } from '../../../dms/log.js'
import { executeActor } from '../../../dms/provider/allocation-run.js'
import type { ExecuteInput } from '../../../dms/provider/bid-context.js'

describe('provider/allocation-run: the network of a run', function () {
  let dir: string
  beforeEach(async function () {
    dir = await mkdtemp(join(tmpdir(), 'dms-allocnet-'))
  })
  afterEach(async function () {
    await rm(dir, { recursive: true, force: true })
  })

  /** The spec the executor is given for an allocation that asked for the network. */
  async function specOf(
    allowNetwork: boolean | undefined,
    restoredIn?: 'provisioning',
    members?: WorkloadMember[],
  ): Promise<ExecutionSpec> {
    let ran!: (spec: ExecutionSpec) => void
    const seen = new Promise<ExecutionSpec>((resolve) => (ran = resolve))
    const executor = {
      run: (spec: ExecutionSpec) => {
        ran(spec)
        return Promise.resolve(notStarted('failed', -1, 'not run in this test'))
      },
      listRuns: () => Promise.resolve([]),
    } as unknown as Engine
    const logic = executeActor({
      executor,
      blobs: {} as BlobService,
      clock: new ManualClock(1),
      log: silentLogger,
      workDir: dir,
      actorFor: () => ({ send: () => Promise.resolve() }) as unknown as Actor,
      ...(allowNetwork !== undefined ? { allowNetwork } : {}),
    })
    const terms = {
      jobId: 'job-1',
      contractId: 'c-1',
      image: 'dms-test:1',
      maxDurationSeconds: 60,
      resources: { cpu: 1, memoryBytes: 64 * 1024 * 1024, diskBytes: 0, gpus: 0 },
    }
    const input = {
      bidId: 'bid-1',
      allocation: {
        allocationId: 'alloc-1',
        contract: { terms },
        inputs: [],
        workload: members === undefined ? forTerms(terms, ['true'], { network: 'outbound' }) : { members },
        diskBytes: 0,
        invokedAt: 1,
        provisionBy: 60_000,
      },
      requester: { peer: 'requester', inbox: 'job/job-1' },
      ...(restoredIn !== undefined ? { restoredIn } : {}),
    } as unknown as ExecuteInput
    const actor = createActor(logic, { input })
    actor.start()
    try {
      return await seen
    } finally {
      actor.stop()
    }
  }

  it('gets the network it asked for where the provider allows it', async function () {
    const spec = await specOf(true)
    assert.deepEqual(spec.workload, {
      members: [
        {
          name: 'main',
          artifact: { kind: 'image', ref: 'dms-test:1' },
          command: ['true'],
          env: {},
          network: 'outbound',
          resources: { cpu: 1, memoryBytes: 64 * 1024 * 1024 },
        },
      ],
    })
  })

  it('runs without it once the provider no longer allows it (restored after a restart)', async function () {
    assert.equal((await specOf(false, 'provisioning')).workload.members[0].network, 'none')
    assert.equal((await specOf(undefined, 'provisioning')).workload.members[0].network, 'none')
  })

  it("a pod's members: each its own container and share, network only where asked and allowed", async function () {
    const member = (name: string, network?: boolean) =>
      podMember(name, {
        image: 'dms-test:1',
        command: ['sh', '-c', name],
        env: { M: name },
        network,
        cpu: 0.5,
        memoryBytes: 32 * 1024 * 1024,
      })
    const members = [member('a', true), member('b')]
    const allowed = await specOf(true, undefined, members)
    const run = (name: string, network: 'none' | 'outbound') => ({
      name,
      artifact: { kind: 'image', ref: 'dms-test:1' },
      command: ['sh', '-c', name],
      env: { M: name },
      network,
      resources: { cpu: 0.5, memoryBytes: 32 * 1024 * 1024 },
    })
    assert.deepEqual(allowed.workload, { members: [run('a', 'outbound'), run('b', 'none')] })
    const restored = await specOf(false, 'provisioning', members)
    assert.deepEqual(
      restored.workload.members.map((m) => m.network),
      ['none', 'none'],
    )
  })
})
