/** `dms workflow run|list|status|cancel|logs|outputs`. */
import type { WorkflowRunOptions } from '../workflow.js'
import type { RegisterCommand } from './types.js'

const wf = () => import('../workflow.js')
const watching = () => import('../workflow-watch.js')

export const registerWorkflow: RegisterCommand = (program, { socketOpt }) => {
  const workflow = program
    .command('workflow')
    .description('post and inspect workflows (tasks that depend on each other) on a requester node')
  workflow
    .command('run')
    .description('post a workflow document (specs/workflow.md)')
    .requiredOption('-f, --file <workflow>', 'workflow file (JSON)')
    .option('--wait', 'wait until it ends and print the task table; exit 2 unless it completed')
    .option('--follow', 'like --wait, printing each task change as it happens')
    .option('--json', 'print JSON')
    .option(...socketOpt)
    .action(async (o: WorkflowRunOptions) => (await wf()).workflowRunCommand(o))
  workflow
    .command('list')
    .alias('ls')
    .description("list this requester's workflows, newest first")
    .option('-w, --watch', 'then print each workflow again as it changes (until Ctrl-C)')
    .option('--json', 'print JSON')
    .option(...socketOpt)
    .action(async (o: { socket: string; json?: boolean; watch?: boolean }) =>
      o.watch ? (await watching()).workflowListWatch(o) : (await wf()).workflowListCommand(o),
    )
  workflow
    .command('status')
    .alias('describe')
    .description("show a workflow's state, escrow plan and per-task table")
    .argument('<id>', 'workflow id, name or unique id prefix')
    .option('-w, --watch', 'print it again each time it changes, until the workflow ends (or Ctrl-C)')
    .option('--json', 'print JSON')
    .option(...socketOpt)
    .action(async (id: string, o: { socket: string; json?: boolean; watch?: boolean }) =>
      o.watch ? (await watching()).workflowStatusWatch(id, o) : (await wf()).workflowStatusCommand(id, o),
    )
  workflow
    .command('cancel')
    .alias('stop')
    .description('cancel every live task of a workflow (the time used is paid); no new task starts')
    .argument('<id>', 'workflow id, name or unique id prefix')
    .option('--json', 'print JSON')
    .option(...socketOpt)
    .action(async (id: string, o: { socket: string; json?: boolean }) =>
      (await wf()).workflowCancelCommand(id, o),
    )
  workflow
    .command('logs')
    .description("print one task's logs (a pod's task: its own container's, from the pod's job)")
    .argument('<id>', 'workflow id, name or unique id prefix')
    .argument('<task>', 'task name')
    .option('-f, --follow', 'stream the logs until the job ends')
    .option('--json', 'print JSON')
    .option(...socketOpt)
    .action(async (id: string, task: string, o: { socket: string; json?: boolean; follow?: boolean }) =>
      (await wf()).workflowLogsCommand(id, task, o),
    )
  workflow
    .command('outputs')
    .description(
      "fetch one task's outputs to the node (even those left at its provider), list or download them",
    )
    .argument('<id>', 'workflow id, name or unique id prefix')
    .argument('<task>', 'task name')
    .option('--out <dir>', 'write the files (and outputs.tar if any) into this folder, checking each sha256')
    .option('--force', 'overwrite files that already exist in --out')
    .option('--json', 'print JSON')
    .option(...socketOpt)
    .action(
      async (
        id: string,
        task: string,
        o: { socket: string; json?: boolean; out?: string; force?: boolean },
      ) => (await wf()).workflowOutputsCommand(id, task, o),
    )
}
