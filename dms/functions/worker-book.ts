/**
 * The workers registered on this node and the function table they make (specs/functions.md,
 * "Workers", "The needs dance"). A descriptor is registered once every blob it names is in the
 * node's blob store with its declared size; until then `register` answers the blobs it lacks, which
 * the client uploads (`PUT /v1/blobs`) before posting the descriptor again. Records are kept in
 * the node's database (`STORES.workers`), read into memory at start.
 */
import type { Clock } from '../../actors/clock.js'
import { DmsError } from '../../actors/errors.js'
import { Repo, type Db } from '../store/db.js'
import { STORES } from '../store/tables.js'
import { InvalidWorkerError } from './errors.js'
import type { BlobRef } from './names.js'
import type { FunctionRow, Registration, WorkerRecord } from './views.js'
import { parseWorker, workerFiles, workerIdOf, type WorkerId } from './worker.js'

/** The node holds its most workers already (HTTP 409). */
export class TooManyWorkersError extends DmsError {
  readonly statusCode = 409
  constructor(readonly limit: number) {
    super('TOO_MANY_WORKERS', `this node holds ${limit} workers, its most`)
  }
}

export interface WorkerBookInit {
  /** Most workers the node keeps. @default 1024 */
  maxWorkers?: number
}

const keyOf = (fn: string, version: string, bsv: string) => `${fn}\0${version}\0${bsv}`

export class WorkerBook {
  private readonly repo: Repo<WorkerRecord>
  private readonly workers = new Map<WorkerId, WorkerRecord>()
  /** function, version, build system version -> the workers implementing it, oldest first. */
  private readonly table = new Map<string, WorkerId[]>()
  readonly maxWorkers: number

  constructor(
    private readonly c: {
      db: Db
      clock: Pick<Clock, 'now'>
      blobs: { size(sha256: string): Promise<number | undefined> }
    },
    init: WorkerBookInit = {},
  ) {
    this.repo = new Repo(c.db, STORES.workers.name)
    this.maxWorkers = init.maxWorkers ?? 1024
  }

  async start(): Promise<void> {
    if (this.workers.size > 0) return
    const all = await this.repo.values()
    for (const r of all.sort((a, b) => a.registeredAt - b.registeredAt)) this.add(r)
  }

  stop(): void {}

  /**
   * Checks `body` as a worker descriptor (InvalidWorkerError) and registers it once every blob it
   * names is here; otherwise answers what is missing and stores nothing.
   */
  async register(body: unknown): Promise<Registration> {
    const descriptor = parseWorker(body)
    const id = workerIdOf(descriptor)
    if (this.workers.has(id)) return { id, registered: true, created: false, needs: [] }
    const needs: BlobRef[] = []
    const asked = new Set<string>()
    const files = workerFiles(descriptor)
    for (const [i, f] of files.entries()) {
      if (asked.has(f.sha256)) continue
      asked.add(f.sha256)
      const size = await this.c.blobs.size(f.sha256)
      if (size === undefined) needs.push({ sha256: f.sha256, size: f.size })
      else if (size !== f.size) {
        const field =
          i < descriptor.executables.length
            ? `executables.${i}`
            : `files.${i - descriptor.executables.length}`
        throw new InvalidWorkerError(`${field}.size`, `blob ${f.sha256} holds ${size} bytes, not ${f.size}`)
      }
    }
    if (needs.length > 0) return { id, registered: false, created: false, needs }
    if (this.workers.size >= this.maxWorkers) throw new TooManyWorkersError(this.maxWorkers)
    const record: WorkerRecord = { v: 1, id, descriptor, registeredAt: this.c.clock.now() }
    await this.repo.put(id, record)
    this.add(record)
    return { id, registered: true, created: true, needs: [] }
  }

  get(id: WorkerId): WorkerRecord | undefined {
    return this.workers.get(id)
  }

  /** Every worker, oldest first. */
  list(): WorkerRecord[] {
    return [...this.workers.values()]
  }

  /** The function table, sorted by function, version and build system version. */
  functions(): FunctionRow[] {
    return [...this.table.entries()]
      .map(([k, workers]) => {
        const [fn, version, buildSystemVersion] = k.split('\0')
        return { function: fn, version, buildSystemVersion, workers: [...workers] }
      })
      .sort((a, b) =>
        keyOf(a.function, a.version, a.buildSystemVersion) <
        keyOf(b.function, b.version, b.buildSystemVersion)
          ? -1
          : 1,
      )
  }

  /** The first worker registered that implements the function at that version and build system. */
  match(fn: string, version: string, buildSystemVersion: string): WorkerRecord | undefined {
    const id = this.table.get(keyOf(fn, version, buildSystemVersion))?.[0]
    return id === undefined ? undefined : this.workers.get(id)
  }

  private add(r: WorkerRecord): void {
    this.workers.set(r.id, r)
    for (const f of r.descriptor.functions) {
      const k = keyOf(f.name, f.version, r.descriptor.buildSystemVersion)
      const row = this.table.get(k) ?? []
      row.push(r.id)
      this.table.set(k, row)
    }
  }
}
