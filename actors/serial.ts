/** One serial queue: tasks run one at a time, in the order they were queued. */

export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve()

  /**
   * Runs `task` once every task queued before it has settled; resolves or rejects with its
   * outcome. A task that fails does not stop the ones queued after it.
   */
  run<T>(task: () => T | Promise<T>): Promise<T> {
    const result = this.tail.then(task, task)
    this.tail = result.catch(() => undefined)
    return result
  }

  /** Resolves once every task queued so far has settled. */
  idle(): Promise<void> {
    return this.tail.then(() => undefined)
  }
}
