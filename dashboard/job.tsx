/** One job: its journey, bids, contract and proof, live logs, outputs and settlement; cancel. */
import { useEffect, useState } from 'preact/hooks'
import { api, subscribe } from './api.js'
import { usePainted } from './first-paint.js'
import { perKey } from './live.js'
import { Bids } from './bids.js'
import { Logs } from './logs.js'
import { Outcome } from './outcome.js'
import { Timeline } from './timeline.js'
import { FINAL, viewOf, type JobDetail, type JobView } from './types.js'

export function JobPage({ id }: { id: string }) {
  const [job, setJob] = useState<JobView | undefined>(undefined)
  const [error, setError] = useState<string | undefined>(undefined)
  const [busy, setBusy] = useState(false)

  useEffect(() => {
    let live = true
    const load = perKey(() =>
      api<JobDetail>('GET', `/v1/jobs/${id}`)
        .then((j) => live && setJob(viewOf(j)))
        .catch((e: Error) => live && setError(e.message)),
    )
    load(id)
    const off = subscribe({ job: (e) => e.id === id && load(id) })
    return () => {
      live = false
      off()
    }
  }, [id])

  usePainted(job !== undefined || error !== undefined)
  if (job === undefined) return <p class={error ? 'error' : ''}>{error ?? 'Loading…'}</p>
  const r = job.record
  const cancel = () => {
    setBusy(true)
    api('DELETE', `/v1/jobs/${id}`)
      .catch((e: Error) => setError(e.message))
      .finally(() => setBusy(false))
  }
  return (
    <article id="job" data-state={job.state}>
      <h1>
        {r.spec.name ?? 'Job'}{' '}
        <span class={`state s-${job.state}`} id="job-state">
          {job.state}
        </span>
      </h1>
      <p class="mono">
        {r.id} · {r.spec.image} · {r.spec.command.join(' ')}
      </p>
      <p>
        max price {r.spec.maxPrice} · max duration {r.spec.maxDurationSeconds} s · cpu {r.spec.resources.cpu}
        {r.rerunOf !== undefined && (
          <>
            {' '}
            · rerun of <a href={`#/jobs/${r.rerunOf}`}>{r.rerunOf.slice(0, 8)}</a>
          </>
        )}
      </p>
      {!FINAL.has(job.state) && (
        <button id="cancel" disabled={busy || r.cancelRequestedAt !== undefined} onClick={cancel}>
          {r.cancelRequestedAt !== undefined ? 'Cancelling…' : 'Cancel job'}
        </button>
      )}
      {error !== undefined && <p class="error">{error}</p>}
      {r.error !== undefined && (
        <p class="error" id="job-error">
          {r.error.code}: {r.error.message}
        </p>
      )}
      <div class="grid">
        <Timeline job={job} />
        <Bids job={job} />
      </div>
      <Logs id={id} state={job.state} />
      <Outcome job={job} />
    </article>
  )
}
