/** The workflow part of `dms demo`: two tasks, the second reading the first's output. */
import type { ApiClient } from '../api/client.js'
import { print } from './output.js'
import { taskTable, type WorkflowView } from './workflow.js'

/** Posts a two-task workflow to the requester, prints each task change and the final table. */
export async function demoWorkflow(api: ApiClient, image: string): Promise<WorkflowView> {
  const job = (script: string) => ({
    image,
    command: ['sh', '-c', script],
    resources: { cpu: 0.5, memory: '64MiB' },
    maxDuration: 60,
    maxPrice: 100_000,
  })
  const doc = {
    name: 'double',
    tasks: [
      { name: 'produce', job: job('echo -n 21 > /outputs/n.txt'), outputs: ['n.txt'] },
      {
        name: 'double',
        job: job('echo "21 doubled is $(( $(cat /inputs/n.txt) * 2 ))"'),
        from: [{ fromTask: 'produce', path: 'n.txt' }],
      },
    ],
  }
  print(`\nPOST /v1/workflows  ${JSON.stringify(doc)}`)
  const { id } = await api.ok<{ id: string }>('POST', '/v1/workflows', doc)
  print(`workflow ${id}`)
  const t0 = Date.now()
  const seen = new Map<string, string>()
  for (;;) {
    const wf = await api.ok<WorkflowView>('GET', `/v1/workflows/${id}`)
    for (const [name, row] of Object.entries(wf.tasks)) {
      const key = `${row.state}/${row.jobState ?? ''}`
      if (seen.get(name) === key) continue
      seen.set(name, key)
      print(
        `  ${String(Date.now() - t0).padStart(6)} ms  ${name}: ${row.state}${row.jobState ? ` (${row.jobState})` : ''}`,
      )
    }
    if (['completed', 'failed', 'cancelled'].includes(wf.state)) {
      for (const line of taskTable(wf)) print(`  ${line}`)
      const last = wf.tasks.double.jobId
      if (last !== undefined) {
        const j = await api.ok<{ result?: { stdout: string } }>('GET', `/v1/jobs/${last}`)
        print(`    stdout of double: ${j.result?.stdout.trim() ?? '(none)'}`)
      }
      print(`workflow ${id}: ${wf.state} (escrow plan ${wf.escrowPlan}, one contract per task)`)
      return wf
    }
    await new Promise((r) => setTimeout(r, 200)) // display refresh
  }
}
