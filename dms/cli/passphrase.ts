/**
 * The CLI's passphrase: DMS_PASSPHRASE when set, else asked on the terminal (/dev/tty, so that it
 * works with stdin or stderr redirected); with neither (CI, a service) it fails with how to set
 * the variable. A passphrase that seals a key is asked twice and must not be empty.
 */
import { openSync } from 'node:fs'
import { createInterface } from 'node:readline'
import { ReadStream, WriteStream } from 'node:tty'
import { DmsError } from '../../actors/errors.js'
import { envPassphrase, PASSPHRASE_ENV, PassphraseRequiredError, type PassphraseSource } from '../keys.js'

export class PassphraseRefusedError extends DmsError {
  constructor(reason: string) {
    super('PASSPHRASE_REFUSED', reason)
  }
}

export function cliPassphrase(env: string = PASSPHRASE_ENV, label = 'key passphrase'): PassphraseSource {
  return async (purpose = 'unseal') => {
    if ((process.env[env] ?? '') !== '') return envPassphrase({ [PASSPHRASE_ENV]: process.env[env] })()
    const tty = openTty()
    if (tty === undefined) throw new PassphraseRequiredError('node.key')
    try {
      if (purpose === 'unseal') return await ask(tty, `${label}: `)
      const first = await ask(tty, `new ${label}: `)
      if (first === '')
        throw new PassphraseRefusedError('an empty passphrase would leave the key unprotected: choose one')
      const again = await ask(tty, `new ${label} again: `)
      if (again !== first) throw new PassphraseRefusedError('the two passphrases differ: nothing was changed')
      return first
    } finally {
      tty.input.destroy()
      tty.output.destroy()
    }
  }
}

interface Tty {
  input: ReadStream
  output: WriteStream
}

/** The controlling terminal, or undefined when there is none (a service, CI, a pipe). */
function openTty(): Tty | undefined {
  try {
    return {
      input: new ReadStream(openSync('/dev/tty', 'r')),
      output: new WriteStream(openSync('/dev/tty', 'w')),
    }
  } catch {
    return undefined
  }
}

function ask(tty: Tty, question: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const rl = createInterface({ input: tty.input, output: tty.output, terminal: true })
    // Echo nothing but the question while the passphrase is typed.
    const out = rl as unknown as { _writeToOutput: (s: string) => void }
    out._writeToOutput = (s: string) => {
      if (s.includes(question)) tty.output.write(question)
    }
    rl.question(question, (answer) => {
      rl.close()
      tty.output.write('\n')
      resolve(answer)
    })
    rl.on('SIGINT', () => {
      rl.close()
      reject(new PassphraseRefusedError('passphrase prompt interrupted'))
    })
  })
}
