/**
 * `dms workflow status -w` and `dms workflow list -w` (watch.ts): printed again as workflows
 * change, from the node's `workflow` events (each task's job change is stored in its workflow
 * first). `workflow status -w` ends when the workflow ends; `workflow list -w` on Ctrl-C.
 */
import { print, printData, printNote } from './output.js'
import { resolveWorkflowId } from './resolve-id.js'
import { rowStream } from './table.js'
import { changeFilter, watch } from './watch.js'
import {
  FINAL_WORKFLOW,
  readWorkflow,
  readWorkflows,
  WORKFLOW_COLUMNS,
  workflowStatusLines,
} from './workflow.js'

/** The workflow's status and task table, then again each time they changed, until it ends. */
export async function workflowStatusWatch(
  given: string,
  opts: { socket: string; json?: boolean },
): Promise<void> {
  const id = await resolveWorkflowId(opts.socket, given)
  const changed = changeFilter()
  let printed = false
  await watch({
    socket: opts.socket,
    kinds: ['workflow'],
    concerns: (e) => e.data.id === id,
    read: () => readWorkflow(opts.socket, id),
    show: (wf) => {
      const lines = opts.json ? [JSON.stringify(wf)] : workflowStatusLines(wf)
      if (changed(lines.join('\n'))) {
        if (opts.json) printData(wf)
        else {
          if (printed) print('')
          for (const l of lines) print(l)
        }
        printed = true
      }
      return FINAL_WORKFLOW.has(wf.state)
    },
  })
}

/** Every workflow, then each one that is new or changed, as a row; `--json`: each as a document. */
export async function workflowListWatch(opts: { socket: string; json?: boolean }): Promise<void> {
  const rows = rowStream(WORKFLOW_COLUMNS, (w) => w.id)
  const json = new Map<string, string>()
  let first = true
  await watch({
    socket: opts.socket,
    kinds: ['workflow'],
    read: () => readWorkflows(opts.socket),
    show: (workflows) => {
      if (opts.json) {
        for (const w of workflows) {
          const text = JSON.stringify(w)
          if (json.get(w.id) !== text && !first) printData(w)
          json.set(w.id, text)
        }
        if (first) printData({ workflows })
      } else {
        if (first && workflows.length === 0) printNote('no workflows yet: watching')
        rows(workflows)
      }
      first = false
      return false
    },
  })
}
