/**
 * A job's output: what is stored or buffered so far, then each piece as it arrives (log events).
 * A pod's is shown member by member under `==> member <name> <==`; its live pieces carry `[name]`.
 */
import { useEffect, useState } from 'preact/hooks'
import { api, subscribe, type LogEvent } from './api.js'
import { FINAL } from './types.js'

type Output = { stdout: string; stderr: string; truncated: boolean }

const piece = (e: LogEvent): string => (e.member !== undefined ? `[${e.member}] ${e.data}` : e.data)

/** The output read from the node: a pod's member by member. */
const textOf = (l: Output & { members?: Array<Output & { name: string }> }): string =>
  l.members !== undefined
    ? l.members.map((m) => `==> member ${m.name} <==\n${m.stdout}${m.stderr}`).join('')
    : l.stdout + l.stderr

export function Logs({ id, state }: { id: string; state: string }) {
  const [text, setText] = useState('')
  const [truncated, setTruncated] = useState(false)

  useEffect(() => {
    let live = true
    const early: LogEvent[] = []
    let loaded = false
    // Subscribe first, then read: a piece that arrives in between is kept, not lost.
    const off = subscribe({
      log: (e) => {
        if (e.jobId !== id) return
        if (loaded) setText((t) => t + piece(e))
        else early.push(e)
      },
    })
    void api<Output & { members?: Array<Output & { name: string }> }>('GET', `/v1/jobs/${id}/logs`)
      .then((l) => {
        if (!live) return
        loaded = true
        const sofar = textOf(l)
        // Pieces already in the snapshot are not repeated.
        setText(
          sofar +
            early
              .filter((e) => !sofar.includes(e.data))
              .map(piece)
              .join(''),
        )
        setTruncated(l.truncated)
      })
      .catch(() => (loaded = true))
    return () => {
      live = false
      off()
    }
  }, [id, FINAL.has(state)])

  return (
    <section>
      <h2>Logs</h2>
      <pre id="logs">{text !== '' ? text : FINAL.has(state) ? '(no output)' : '(no output yet)'}</pre>
      {truncated && <p class="note">truncated at the provider's limit</p>}
    </section>
  )
}
