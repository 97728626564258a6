import { createInterface } from 'node:readline'
import { envPassphrase, PASSPHRASE_ENV, PassphraseRequiredError, type PassphraseSource } from '../keys.js'

/**
 * The CLI's passphrase: DMS_PASSPHRASE when set, else a hidden prompt on the terminal; with
 * neither (CI, a service, no stdin) it fails with how to set the variable.
 */
export function cliPassphrase(): PassphraseSource {
  return async () => {
    if ((process.env[PASSPHRASE_ENV] ?? '') !== '') return envPassphrase()()
    if (!process.stdin.isTTY || !process.stderr.isTTY) throw new PassphraseRequiredError('node.key')
    return prompt('key passphrase: ')
  }
}

function prompt(question: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true })
    // Echo nothing but the question while the passphrase is typed.
    const out = rl as unknown as { _writeToOutput: (s: string) => void }
    out._writeToOutput = (s: string) => {
      if (s.includes(question)) process.stderr.write(question)
    }
    rl.question(question, (answer) => {
      rl.close()
      process.stderr.write('\n')
      if (answer === '') reject(new PassphraseRequiredError('node.key'))
      else resolve(answer)
    })
    rl.on('SIGINT', () => {
      rl.close()
      reject(new Error('passphrase prompt interrupted'))
    })
  })
}
