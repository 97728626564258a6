/**
 * `--watch` (`-w`), as `kubectl get -w`: a view printed, then printed again when what it shows
 * changes. Driven by the node's event stream (`GET /v1/events?only=…`, specs/dashboard.md "Live
 * updates"), never by polling: the view is read once at the start and once per burst of events
 * that concern it (events during a read cause one more read after it). It ends when `show` says
 * the thing watched ended, on Ctrl-C (exit 130), or with an error when the node goes away.
 */
import { ApiClientError, okResponse } from '../api/client.js'
import { CliError } from './output.js'

/** The kinds of event a watch listens to (the event stream's `only`). */
export type WatchedKind = 'job' | 'workflow'

/** One event from the stream: its kind and its data (`{ id, state }` for both kinds watched). */
export interface NodeEvent {
  kind: string
  data: { id?: unknown; state?: unknown }
}

/** Longest event frame taken from the node (a job event is about 100 bytes): a stream that never ends a frame is refused. */
export const MAX_EVENT_FRAME = 64 * 1024

export interface WatchOptions<T> {
  socket: string
  kinds: WatchedKind[]
  /** Whether an event concerns the view. @default every event of `kinds` */
  concerns?: (e: NodeEvent) => boolean
  /** Reads the view from the node. */
  read: () => Promise<T>
  /** Prints it (or what changed in it); true when the watch is over (the thing watched ended). */
  show: (view: T) => boolean
  /** Ends the watch quietly (the command's Ctrl-C). */
  signal?: AbortSignal
}

/** One `event:`/`data:` frame of a server-sent event stream; undefined for a comment or a frame without data. */
export function parseFrame(frame: string): NodeEvent | undefined {
  let kind = 'message'
  let data: string | undefined
  for (const line of frame.split('\n')) {
    if (line.startsWith('event:')) kind = line.slice(6).trim()
    else if (line.startsWith('data:'))
      data = (data === undefined ? '' : `${data}\n`) + line.slice(5).trimStart()
  }
  if (data === undefined) return undefined
  try {
    const parsed: unknown = JSON.parse(data)
    return typeof parsed === 'object' && parsed !== null ? { kind, data: parsed } : undefined
  } catch {
    return undefined
  }
}

/** Runs a watch until it is over (resolves), Ctrl-C or `signal` (resolves), or the stream fails (rejects). */
export async function watch<T>(o: WatchOptions<T>): Promise<void> {
  const ac = new AbortController()
  o.signal?.addEventListener('abort', () => ac.abort(), { once: true })
  const onSigint = () => {
    process.exitCode = 130
    ac.abort()
  }
  process.once('SIGINT', onSigint)
  try {
    // Subscribed before the first read: a change between the two is not missed.
    const res = await okResponse(o.socket, `/v1/events?only=${o.kinds.join(',')}`, ac.signal).catch(
      (err: unknown) => {
        if (ac.signal.aborted) return undefined
        // 503 TOO_MANY_STREAMS: the node's dashboards and watches hold every stream it serves.
        if (err instanceof ApiClientError) throw new CliError(`--watch: ${err.message}`)
        throw err
      },
    )
    if (res === undefined) return
    await new Promise<void>((resolve, reject) => {
      let done = false
      let reading = false
      let again = false
      const finish = (err?: unknown) => {
        if (done) return
        done = true
        res.destroy()
        if (err === undefined) resolve()
        else reject(err instanceof Error ? err : new Error(`watch failed: ${JSON.stringify(err)}`))
      }
      const refresh = async () => {
        if (reading) {
          again = true
          return
        }
        reading = true
        try {
          do {
            again = false
            const view = await o.read()
            if (done) return
            if (o.show(view)) return finish()
          } while (again)
        } catch (err) {
          finish(err)
        } finally {
          reading = false
        }
      }
      let buf = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        buf += chunk
        let end: number
        while ((end = buf.indexOf('\n\n')) >= 0) {
          const e = parseFrame(buf.slice(0, end))
          buf = buf.slice(end + 2)
          if (e !== undefined && (o.concerns?.(e) ?? true)) void refresh()
        }
        if (buf.length > MAX_EVENT_FRAME)
          finish(
            new CliError(
              `the node's event stream sent a frame over ${MAX_EVENT_FRAME} bytes: stopped watching`,
            ),
          )
      })
      res.on('error', (err) => finish(ac.signal.aborted ? undefined : err))
      res.on('close', () =>
        finish(
          ac.signal.aborted
            ? undefined
            : new CliError('the node closed its event stream (stopped?): stopped watching'),
        ),
      )
      ac.signal.addEventListener('abort', () => finish(), { once: true })
      void refresh()
    })
  } finally {
    process.off('SIGINT', onSigint)
  }
}

/**
 * What a view printed last, so that it is printed again only when it changed: `changed(text)` is
 * true (and remembers `text`) when `text` differs from the last.
 */
export function changeFilter(): (text: string) => boolean {
  let last: string | undefined
  return (text) => {
    if (text === last) return false
    last = text
    return true
  }
}
