/**
 * An action as a market job, in the seed's file mode (specs/functions.md, "File mode"): the
 * worker's files, the build file (the action's canonical JSON) and an Inputs folder of blobs named
 * by hash are the job's inputs; a launcher in `/bin/sh` (the process engine's runtime) copies the
 * worker to /tmp (staged inputs are read-only and not executable), then runs its first executable
 * in the action's folder with `build.json` and `/outputs`. Whatever it writes under /outputs comes
 * back content addressed (the job's signed output manifest).
 */
import { canonicalJson } from '../../actors/canonical-json.js'
import type { ActionDescriptor, ActionId } from './action.js'
import { DEFAULT_WORKER_MEMORY_BYTES, workerFiles, type WorkerDescriptor } from './worker.js'

/** Room left on the job's disk for its outputs, beyond its inputs. */
export const ACTION_OUTPUTS_BYTES = 64 * 1024 * 1024
/** The runtime the launcher runs in (a process engine's `provider.process.runtimes`). */
export const LAUNCHER_RUNTIME = '/bin/sh'

// Paths and names are checked to `[A-Za-z0-9._+-/]` (names.ts): quoting them is enough.
const q = (s: string) => `'${s}'`

/** The launcher script: copy the worker, make its folders, run its entry in the action's folder. */
export function launcherScript(w: WorkerDescriptor): string {
  const exe = w.executables.map((e) => q(`/tmp/worker/${e.path}`))
  const dirs = (w.dirs ?? []).map((d) => q(`/tmp/worker/${d}`))
  return [
    'set -e',
    'mkdir -p /tmp/worker /tmp/action/Inputs /tmp/action/Attachments',
    'cp -R /inputs/worker/. /tmp/worker/',
    `chmod 0755 ${exe.join(' ')}`,
    ...(dirs.length > 0 ? [`mkdir -p ${dirs.join(' ')}`] : []),
    'ln -s /inputs/action/build.json /tmp/action/build.json',
    'for d in Inputs Attachments; do for f in /inputs/action/$d/*; do if [ -e "$f" ]; then ln -s "$f" /tmp/action/$d/; fi; done; done',
    'cd /tmp/action',
    `exec ${exe[0]} build.json /outputs`,
  ].join('\n')
}

/** The job spec (the body of `POST /v1/jobs`) that runs `action` on `worker`. */
export function actionJobSpec(
  worker: WorkerDescriptor,
  action: ActionDescriptor,
  id: ActionId,
  opts: { maxPrice: number; queue?: string },
): Record<string, unknown> {
  const buildFile = canonicalJson(action)
  const inputs: Array<{ path: string; sha256?: string; content?: string }> = [
    ...workerFiles(worker).map((f) => ({ path: `worker/${f.path}`, sha256: f.sha256 })),
    { path: 'action/build.json', content: buildFile },
  ]
  const seen = new Set<string>()
  for (const i of action.inputs) {
    if (seen.has(i.sha256)) continue
    seen.add(i.sha256)
    inputs.push({ path: `action/Inputs/${i.sha256}`, sha256: i.sha256 })
  }
  for (const a of action.attachments ?? [])
    inputs.push({ path: `action/Attachments/${a.name}`, sha256: a.sha256 })
  const bytes =
    workerFiles(worker).reduce((n, f) => n + f.size, 0) +
    Buffer.byteLength(buildFile) +
    [...action.inputs, ...(action.attachments ?? [])].reduce((n, b) => n + b.size, 0)
  return {
    name: `action ${action.function} ${id.slice(0, 12)}`,
    runtime: LAUNCHER_RUNTIME,
    command: [LAUNCHER_RUNTIME, '-c', launcherScript(worker)],
    env: {
      ...(worker.environment ?? {}),
      DMS_ACTION_ID: id,
      DMS_FUNCTION: action.function,
      DMS_FUNCTION_VERSION: action.version,
    },
    resources: {
      cpu: worker.cores,
      memory: worker.memoryBytes ?? DEFAULT_WORKER_MEMORY_BYTES,
      disk: bytes + ACTION_OUTPUTS_BYTES,
    },
    maxDuration: worker.timeout,
    maxPrice: opts.maxPrice,
    ...(opts.queue !== undefined ? { queue: opts.queue } : {}),
    inputs,
  }
}
