/** The requester's jobs, newest first, updated live from the job events. */
import { useEffect, useState } from 'preact/hooks'
import { api, subscribe } from './api.js'
import { usePainted } from './first-paint.js'
import { perKey } from './live.js'
import { age, short, summaryOf, type JobDetail, type JobSummary } from './types.js'

const STATES = ['', 'bidding', 'running', 'completed', 'failed', 'cancelled', 'queued', 'scheduled']

export function JobList() {
  const [jobs, setJobs] = useState<JobSummary[] | undefined>(undefined)
  const [error, setError] = useState<string | undefined>(undefined)
  const [state, setState] = useState('')
  const [text, setText] = useState('')
  const [now, setNow] = useState(Date.now())

  useEffect(() => {
    let live = true
    const load = () =>
      api<{ jobs: JobSummary[] }>('GET', '/v1/jobs?limit=200')
        .then((r) => live && setJobs(r.jobs))
        .catch((e: Error) => live && setError(e.message))
    void load()
    // A changed job is fetched alone and put in its row; a new one goes on top.
    const fetchJob = perKey((id) =>
      api<JobDetail>('GET', `/v1/jobs/${id}`).then((d) => {
        const j = summaryOf(d)
        if (!live) return
        setNow(Date.now())
        setJobs((old) => {
          const list = old ?? []
          const i = list.findIndex((x) => x.id === j.id)
          return i < 0 ? [j, ...list] : list.map((x, k) => (k === i ? j : x))
        })
      }),
    )
    const off = subscribe({ job: (e) => fetchJob(e.id) })
    return () => {
      live = false
      off()
    }
  }, [])

  usePainted(jobs !== undefined || error !== undefined)

  const shown = (jobs ?? []).filter(
    (j) =>
      (state === '' || j.state === state) &&
      (text === '' || `${j.id} ${j.name ?? ''} ${j.image ?? ''} ${j.provider ?? ''}`.includes(text)),
  )
  return (
    <section>
      <h1>Jobs</h1>
      <div class="filters">
        <label>
          State{' '}
          <select id="filter-state" value={state} onChange={(e) => setState(e.currentTarget.value)}>
            {STATES.map((s) => (
              <option value={s}>{s === '' ? 'any' : s}</option>
            ))}
          </select>
        </label>
        <label>
          Find{' '}
          <input
            id="filter-text"
            value={text}
            placeholder="id, name, image, provider"
            onInput={(e) => setText(e.currentTarget.value)}
          />
        </label>
      </div>
      {error !== undefined && <p class="error">{error}</p>}
      {jobs === undefined ? (
        <p>Loading…</p>
      ) : (
        <div class="scroll">
          <table id="jobs">
            <thead>
              <tr>
                <th>Job</th>
                <th>State</th>
                <th>Image</th>
                <th>Provider</th>
                <th>Price</th>
                <th>Age</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((j) => (
                <tr data-job={j.id} data-state={j.state}>
                  <td>
                    <a href={`#/jobs/${j.id}`}>{j.name ?? j.id.slice(0, 8)}</a>
                  </td>
                  <td>
                    <span class={`state s-${j.state}`}>{j.state}</span>
                  </td>
                  <td class="mono">{j.image}</td>
                  <td class="mono">{short(j.provider)}</td>
                  <td>{j.price ?? '-'}</td>
                  <td>{age(now - j.createdAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {shown.length === 0 && <p>No jobs{state !== '' || text !== '' ? ' match' : ' yet'}.</p>}
        </div>
      )}
    </section>
  )
}
