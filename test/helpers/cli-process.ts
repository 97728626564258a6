/**
 * The built CLI (`bin/dms.js`) as a child process that a test watches as it runs: its output so
 * far, and a wait for a text on its stdout (no sleeps).
 */
import { spawn, type ChildProcess } from 'node:child_process'

/** The CLI as a child process: its output so far, and waits on it. */
export function cli(...args: string[]) {
  const child: ChildProcess = spawn(process.execPath, ['bin/dms.js', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  const waiting = new Set<() => void>()
  const wake = () => waiting.forEach((w) => w())
  child.stdout?.setEncoding('utf8').on('data', (c: string) => ((stdout += c), wake()))
  child.stderr?.setEncoding('utf8').on('data', (c: string) => ((stderr += c), wake()))
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  return {
    child,
    exited,
    out: () => stdout,
    err: () => stderr,
    /** Resolves once stdout holds `text` `times` times. */
    printed: (text: string, times = 1) =>
      new Promise<void>((resolve) => {
        const check = () => stdout.split(text).length - 1 >= times && (waiting.delete(check), resolve())
        waiting.add(check)
        check()
      }),
  }
}
