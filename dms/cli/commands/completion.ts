/** `dms completion bash|zsh`. */
import { CliError } from '../output.js'
import type { RegisterCommand } from './types.js'

export const registerCompletion: RegisterCommand = (program) => {
  program
    .command('completion')
    .description('print a shell completion script: source <(dms completion bash), or zsh')
    .argument('<shell>', 'bash or zsh')
    .action(async (shell: string) => {
      if (shell !== 'bash' && shell !== 'zsh')
        throw new CliError(`completion: shell must be bash or zsh, not ${shell}`)
      process.stdout.write((await import('../completion.js')).completionScript(program, shell))
    })
}
