/** `dms completion bash|zsh`, and the hidden `dms __complete <kind>` its script calls for ids. */
import { CliError } from '../output.js'
import type { RegisterCommand } from './types.js'

export const registerCompletion: RegisterCommand = (program, { socketOpt }) => {
  program
    .command('completion')
    .description('print a shell completion script: source <(dms completion bash), or zsh')
    .argument('<shell>', 'bash or zsh')
    .action(async (shell: string) => {
      if (shell !== 'bash' && shell !== 'zsh')
        throw new CliError(`completion: shell must be bash or zsh, not ${shell}`)
      process.stdout.write((await import('../completion.js')).completionScript(program, shell))
    })
  program
    .command('__complete', { hidden: true })
    .description('the ids the completion script offers: job, queue or workflow')
    .argument('<kind>', 'job, queue or workflow')
    .option(...socketOpt)
    .action(async (kind: string, o: { socket: string }) => {
      const { ID_KINDS } = await import('../completion.js')
      if (!(ID_KINDS as readonly string[]).includes(kind)) return
      await (await import('../complete-ids.js')).completeIds(kind as (typeof ID_KINDS)[number], o.socket)
    })
}
