/**
 * Reading a server-sent event stream over real HTTP, as the node's and the contract-db's dashboard
 * specs do (test/unit/api/dashboard.spec.ts, test/unit/contract-db/web.spec.ts).
 */
import { get, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http'

/** `GET path` from `host:port` with `headers`: the answer once its head came (the body unread). */
export function openStream(
  host: string,
  port: number | string,
  path: string,
  headers: OutgoingHttpHeaders,
): Promise<IncomingMessage> {
  return new Promise<IncomingMessage>((resolve, reject) =>
    get({ host, port, path, headers }, resolve).on('error', reject),
  )
}

/**
 * Reads `stream` as UTF-8 text: `until(text)` resolves once everything read so far (by this and
 * earlier calls) includes `text`.
 */
export function readUntil(stream: IncomingMessage): (text: string) => Promise<void> {
  stream.setEncoding('utf8')
  let got = ''
  return (text: string) =>
    new Promise<void>((resolve) => {
      const check = () => got.includes(text) && (stream.off('data', on), resolve())
      const on = (c: string) => ((got += c), check())
      stream.on('data', on)
      check()
    })
}

/** Destroys `stream` and resolves once its socket closed. */
export function closed(stream: IncomingMessage): Promise<void> {
  return new Promise<void>((resolve) => {
    stream.socket.once('close', () => resolve())
    stream.destroy()
  })
}
