/**
 * A pod's followed output, labelled line by line with its member (`b | a line`), as `docker compose
 * logs` does: the members' pieces arrive interleaved and cut anywhere, so each member's partial
 * line on each stream is held until its newline, or until the stream ends. A piece without a
 * member (a job that is no pod) passes through as it came.
 */
import { terminalSafe } from '../terminal-safe.js'

export type Stream = 'stdout' | 'stderr'

/** A held partial line longer than this is written out as a line of its own (a bound, not a cut). */
export const MAX_HELD = 64 * 1024

export interface MemberLines {
  /** One piece of live output, as the logs route gives it. */
  piece(stream: Stream, data: string, member?: string): void
  /** The stream ended: each member's last partial line is written, ended with a newline. */
  end(): void
}

export function memberLines(write: (stream: Stream, text: string) => void): MemberLines {
  const held = new Map<string, { stream: Stream; label: string; text: string }>()
  const labelled = (label: string, text: string) =>
    text
      .split('\n')
      .map((line) => `${label}${line}\n`)
      .join('')
  return {
    piece(stream, data, member) {
      if (member === undefined) return write(stream, data)
      const key = `${stream}\n${member}`
      const part = held.get(key) ?? { stream, label: `${terminalSafe(member)} | `, text: '' }
      const text = part.text + data
      const cut = text.lastIndexOf('\n')
      if (cut === -1 && text.length <= MAX_HELD) {
        held.set(key, { ...part, text })
        return
      }
      let whole = cut === -1 ? text : text.slice(0, cut)
      let rest = cut === -1 ? '' : text.slice(cut + 1)
      if (rest.length > MAX_HELD) [whole, rest] = [`${whole}\n${rest}`, '']
      write(stream, labelled(part.label, whole))
      if (rest === '') held.delete(key)
      else held.set(key, { ...part, text: rest })
    },
    end() {
      for (const part of held.values()) write(part.stream, labelled(part.label, part.text))
      held.clear()
    },
  }
}
