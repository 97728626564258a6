/**
 * The engine connection (a docker-modem) with two of docker-modem's behaviours taken out, because
 * each let one answer from the engine end the process:
 *
 * - Redirects. docker-modem sends every request through its own copy of follow-redirects
 *   (`lib/http.js`): a 3xx answer is followed to wherever its Location points, off the unix
 *   socket and onto TCP, and that second request has no error listener, so a refused connection
 *   is an uncaught exception. The engine redirects any path that is not clean (an image named
 *   `a//b` or `../../containers/json` in `GET /images/<name>/json`), so a requester could choose
 *   where the provider connects, and crash it. Here requests go through Node's own http/https,
 *   which never follow a redirect: a 3xx is an error of that call like any other status.
 * - Pull progress. `followProgress` parses each line with an unguarded JSON.parse inside a stream
 *   listener; here a line that is not JSON fails the pull instead.
 *
 * docker-modem picks its request function by protocol from the table `lib/http.js` exports
 * (`http[modem.protocol].request`); this registers Node's own functions there under names of its
 * own and gives them to its modems only. test/integration/executor/engine-faults.spec.ts holds it
 * to that with an engine that redirects, resets and answers garbage.
 */
import http from 'node:http'
import https from 'node:https'
import { createRequire } from 'node:module'
import type Modem from 'docker-modem'

/** docker-modem as dockerode loads it (the same module instance, whatever npm's layout). */
const fromDockerode = createRequire(createRequire(import.meta.url).resolve('dockerode'))

type RequestFn = (
  options: http.RequestOptions,
  callback: (res: http.IncomingMessage) => void,
) => http.ClientRequest
type ModemInstance = Modem & { protocol?: string }

const NO_REDIRECTS: Record<string, string> = {
  http: 'dms-http-no-redirects',
  https: 'dms-https-no-redirects',
}

function registerTransports(): void {
  const table = fromDockerode('docker-modem/lib/http.js') as Record<string, { request: RequestFn }>
  table[NO_REDIRECTS.http] ??= { request: (options, callback) => http.request(options, callback) }
  table[NO_REDIRECTS.https] ??= { request: (options, callback) => https.request(options, callback) }
}

/** The engine on this socket (or DOCKER_HOST's, docker-modem's defaults), never following redirects. */
export function guardedModem(opts: { socketPath?: string }): Modem {
  registerTransports()
  const ModemClass = fromDockerode('docker-modem') as new (o?: object) => ModemInstance
  const modem = new ModemClass(opts.socketPath !== undefined ? { socketPath: opts.socketPath } : undefined)
  const guarded = NO_REDIRECTS[modem.protocol ?? 'http']
  if (guarded === undefined)
    throw new Error(
      `DOCKER_HOST with ${String(modem.protocol)}:// is not supported: give provider.docker.socketPath, or a tcp:// address`,
    )
  modem.protocol = guarded
  modem.followProgress = followProgress
  return modem
}

/** Longest pull progress line read (the engine's are a few hundred characters). */
const MAX_PROGRESS_LINE = 1024 * 1024

/** docker-modem's followProgress, where a line that is not JSON ends the pull with an error. */
function followProgress(
  stream: NodeJS.ReadableStream,
  onFinished: (err: Error | null, output: unknown[]) => void,
  onProgress?: (event: unknown) => void,
): void {
  // (docker-modem also hands `onFinished` every event; nobody here reads them, so none are kept)
  let buffered = ''
  let finished = false
  const finish = (err: Error | null) => {
    if (finished) return
    finished = true
    stream.removeListener('data', onData)
    onFinished(err, [])
  }
  const onData = (chunk: Buffer | string) => {
    buffered += chunk.toString()
    if (buffered.length > MAX_PROGRESS_LINE) {
      finish(new Error(`the engine sent a progress line longer than ${MAX_PROGRESS_LINE} characters`))
      ;(stream as NodeJS.ReadableStream & { destroy?: () => void }).destroy?.()
      return
    }
    let nl: number
    while (!finished && (nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl).trim()
      buffered = buffered.slice(nl + 1)
      if (line === '') continue
      let event: unknown
      try {
        event = JSON.parse(line)
      } catch {
        finish(
          new Error(`the engine sent a progress line that is not JSON: ${JSON.stringify(line.slice(0, 80))}`),
        )
        ;(stream as NodeJS.ReadableStream & { destroy?: () => void }).destroy?.()
        return
      }
      onProgress?.(event)
    }
  }
  stream.on('data', onData)
  stream.on('error', (err: Error) => finish(err))
  stream.on('end', () => finish(null))
  stream.on('close', () => finish(null))
}
