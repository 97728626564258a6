/**
 * The requester's functions part (specs/functions.md): the worker book and the action book over
 * the node's database, its blob store and its jobs.
 */
import type { Clock } from '../../actors/clock.js'
import type { Db } from '../store/db.js'
import { ActionBook, type ActionJobs } from './action-book.js'
import { WorkerBook, type WorkerBookInit } from './worker-book.js'

export class Functions {
  readonly workers: WorkerBook
  readonly actions: ActionBook

  constructor(
    c: {
      db: Db
      clock: Pick<Clock, 'now'>
      blobs: { size(sha256: string): Promise<number | undefined> }
      jobs: ActionJobs
    },
    init: WorkerBookInit = {},
  ) {
    this.workers = new WorkerBook(c, init)
    this.actions = new ActionBook({ ...c, workers: this.workers })
  }

  async start(): Promise<void> {
    await this.workers.start()
  }

  stop(): void {
    this.workers.stop()
  }
}
