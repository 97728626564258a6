/**
 * The page's way to the node: the REST routes on the same origin (the session cookie goes along),
 * and one EventSource on /v1/events shared by every view.
 */
export class ApiProblem extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly field?: string,
  ) {
    super(message)
  }
}

/**
 * The session's write token, put into the page's HTML by the server: every write sends it in a
 * header, which a page of another origin cannot do (specs/dashboard.md, "Writes from the page").
 */
const writeToken = document.querySelector('meta[name="dms-write-token"]')?.getAttribute('content') ?? ''

/** The headers of a request: the write token on anything but a read. */
const headersFor = (method: string, json: boolean): Record<string, string> => ({
  ...(method === 'GET' ? {} : { 'x-dms-write-token': writeToken }),
  ...(json ? { 'content-type': 'application/json' } : {}),
})

export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(path, {
    method,
    credentials: 'same-origin',
    headers: headersFor(method, body !== undefined),
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  if (res.status === 401) {
    location.assign('/dashboard/login')
    throw new ApiProblem(401, 'UNAUTHORIZED', 'signed out')
  }
  const text = await res.text()
  const parsed = (text === '' ? undefined : JSON.parse(text)) as unknown
  if (!res.ok) {
    const e = (parsed as { error?: { code: string; message: string; field?: string } } | undefined)?.error
    throw new ApiProblem(res.status, e?.code ?? 'HTTP', e?.message ?? res.statusText, e?.field)
  }
  return parsed as T
}

/** Ends the session on the server (a write like any other), then shows the login page. */
export async function signOut(): Promise<void> {
  await fetch('/dashboard/logout', {
    method: 'POST',
    credentials: 'same-origin',
    headers: headersFor('POST', false),
    redirect: 'manual',
  })
  location.assign('/dashboard/login')
}

export interface JobEvent {
  id: string
  state: string
}
export interface LogEvent {
  jobId: string
  stream: 'stdout' | 'stderr'
  data: string
  /** A pod member's output names it. */
  member?: string
}
export interface Events {
  job: JobEvent
  log: LogEvent
  allocation: { id: string; state: string }
  peer: { peerId: string; connected: boolean }
}
type Listener = { [K in keyof Events]?: (e: Events[K]) => void }

const listeners = new Set<Listener>()
let source: EventSource | undefined

/** Listens to the node's change feeds; returns the unsubscribe function. One stream per page. */
export function subscribe(l: Listener): () => void {
  listeners.add(l)
  if (source === undefined) {
    source = new EventSource('/v1/events')
    const s = source
    const on = <K extends keyof Events>(name: K) =>
      s.addEventListener(name, (m) => {
        const e = JSON.parse((m as MessageEvent<string>).data) as Events[K]
        for (const x of listeners) x[name]?.(e)
      })
    on('job')
    on('log')
    on('allocation')
    on('peer')
  }
  return () => listeners.delete(l)
}
