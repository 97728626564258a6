/**
 * The DMS dashboard (specs/dashboard.md): a Preact page over the node's REST API and its event
 * stream. Routes are in the hash: #/jobs, #/jobs/<id>, #/new (requester), #/provider, #/network.
 * The pages shown follow the node's roles (`GET /v1/info`).
 */
import { render } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { api, signOut } from './api.js'
import { holdFirstPaint } from './first-paint.js'
import { JobList } from './jobs.js'
import { JobPage } from './job.js'
import { NetworkPage } from './network.js'
import { NewJob } from './new-job.js'
import { ProviderPage } from './provider.js'

type Roles = { requester: boolean; provider: boolean }

function useHash(): string {
  const [hash, setHash] = useState(location.hash)
  useEffect(() => {
    const on = () => setHash(location.hash)
    addEventListener('hashchange', on)
    return () => removeEventListener('hashchange', on)
  }, [])
  return hash
}

function pageOf(hash: string, roles: Roles): { page: string; id?: string } {
  const job = /^#\/jobs\/([A-Za-z0-9-]{1,100})$/.exec(hash)
  if (job !== null) return { page: 'job', id: job[1] }
  const named = hash.replace(/^#\//, '')
  if (['jobs', 'new', 'provider', 'network'].includes(named)) return { page: named }
  return { page: roles.requester ? 'jobs' : roles.provider ? 'provider' : 'network' }
}

function App({ summary }: { summary: boolean }) {
  const hash = useHash()
  const [roles, setRoles] = useState<Roles | undefined>(undefined)
  useEffect(() => {
    void api<{ roles: Roles }>('GET', '/v1/info').then((i) => setRoles(i.roles))
  }, [])
  // The server's summary is on screen meanwhile (first-paint.ts).
  if (roles === undefined) return summary ? null : <p>Loading…</p>
  const { page, id } = pageOf(hash, roles)
  const link = (to: string, label: string, on: boolean) => (
    <a href={`#/${to}`} class={on ? 'on' : ''} id={`nav-${to}`}>
      {label}
    </a>
  )
  return (
    <>
      <header>
        <strong>DMS</strong>
        <nav>
          {roles.requester && link('jobs', 'Jobs', page === 'jobs' || page === 'job')}
          {roles.requester && link('new', 'Post a job', page === 'new')}
          {roles.provider && link('provider', 'Provider', page === 'provider')}
          {link('network', 'Network', page === 'network')}
        </nav>
        <button type="button" class="quiet" id="sign-out" onClick={() => void signOut()}>
          Sign out
        </button>
      </header>
      <main>
        {page === 'job' && id !== undefined ? (
          <JobPage id={id} />
        ) : page === 'new' ? (
          <NewJob />
        ) : page === 'provider' ? (
          <ProviderPage />
        ) : page === 'network' ? (
          <NetworkPage />
        ) : (
          <JobList />
        )}
      </main>
    </>
  )
}

const root = document.getElementById('app') as HTMLElement
render(<App summary={holdFirstPaint(root)} />, root)
