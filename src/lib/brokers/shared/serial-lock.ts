/** A promise-chain lock: runs tasks one at a time, in call order (a drain's steps, or a channel's operations, must not interleave). */
export class SerialLock {
  private tail: Promise<unknown> = Promise.resolve()

  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.tail.then(task, task)
    this.tail = result.catch(() => undefined)
    return result
  }
}
