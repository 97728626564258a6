/** Waiting for a workflow of a test network's requester to end, on its change events. */
import type { StoredWorkflow } from '../../dms/workflows/runner.js'
import type { TestNetwork } from './network.js'

/** Resolves with the workflow once it is final (event-driven: subscribed before it reads). */
export function workflowEnds(net: TestNetwork, id: string): Promise<StoredWorkflow> {
  const runner = net.requester.workflows!
  return new Promise((resolve) => {
    const final = (w: StoredWorkflow | undefined) =>
      w !== undefined && w.record.id === id && ['completed', 'failed', 'cancelled'].includes(w.state)
    const off = runner.onChange((w) => {
      if (final(w)) {
        off()
        resolve(w)
      }
    })
    void runner.get(id).then((w) => {
      if (final(w)) {
        off()
        resolve(w!)
      }
    })
  })
}
