/**
 * The DMS dashboard (specs/dashboard.md): a Preact page over the node's REST API and its event
 * stream. Routes are in the hash: #/jobs, #/jobs/<id>, #/new.
 */
import { render } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { JobList } from './jobs.js'
import { JobPage } from './job.js'
import { NewJob } from './new-job.js'

function useHash(): string {
  const [hash, setHash] = useState(location.hash)
  useEffect(() => {
    const on = () => setHash(location.hash)
    addEventListener('hashchange', on)
    return () => removeEventListener('hashchange', on)
  }, [])
  return hash
}

function App() {
  const hash = useHash()
  const job = /^#\/jobs\/([A-Za-z0-9-]{1,100})$/.exec(hash)
  const page = job !== null ? 'job' : hash === '#/new' ? 'new' : 'jobs'
  return (
    <>
      <header>
        <strong>DMS</strong>
        <nav>
          <a href="#/jobs" class={page === 'jobs' ? 'on' : ''}>
            Jobs
          </a>
          <a href="#/new" class={page === 'new' ? 'on' : ''} id="nav-new">
            Post a job
          </a>
        </nav>
        <form method="post" action="/dashboard/logout">
          <button type="submit" class="quiet">
            Sign out
          </button>
        </form>
      </header>
      <main>{job !== null ? <JobPage id={job[1]} /> : page === 'new' ? <NewJob /> : <JobList />}</main>
    </>
  )
}

render(<App />, document.getElementById('app') as HTMLElement)
