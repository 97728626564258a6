/** A job's output: what is stored or buffered so far, then each piece as it arrives (log events). */
import { useEffect, useState } from 'preact/hooks'
import { api, subscribe } from './api.js'

export function Logs({ id, state }: { id: string; state: string }) {
  const [text, setText] = useState('')
  const [truncated, setTruncated] = useState(false)

  useEffect(() => {
    let live = true
    const early: string[] = []
    let loaded = false
    // Subscribe first, then read: a piece that arrives in between is kept, not lost.
    const off = subscribe({
      log: (e) => {
        if (e.jobId !== id) return
        if (loaded) setText((t) => t + e.data)
        else early.push(e.data)
      },
    })
    void api<{ stdout: string; stderr: string; truncated: boolean }>('GET', `/v1/jobs/${id}/logs`)
      .then((l) => {
        if (!live) return
        loaded = true
        const sofar = l.stdout + l.stderr
        // Pieces already in the snapshot are not repeated.
        setText(sofar + early.filter((d) => !sofar.includes(d)).join(''))
        setTruncated(l.truncated)
      })
      .catch(() => (loaded = true))
    return () => {
      live = false
      off()
    }
  }, [id, state === 'completed' || state === 'failed'])

  return (
    <section>
      <h2>Logs</h2>
      <pre id="logs">{text === '' ? '(no output yet)' : text}</pre>
      {truncated && <p class="note">truncated at the provider's limit</p>}
    </section>
  )
}
