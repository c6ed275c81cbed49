/**
 * A wait for deliveries that a push-based consumer can cut short: the drain waits up to `ms` for
 * the broker to push more, and the delivery handler (or a close or failure) wakes it at once.
 */
export class WakeSignal {
  private wakeUp: (() => void) | undefined

  /** Resolves after `ms`, or as soon as `wake()` is called. */
  wait(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms)
      function done() {
        clearTimeout(timer)
        resolve()
      }
      this.wakeUp = done
    }).finally(() => {
      this.wakeUp = undefined
    })
  }

  wake(): void {
    this.wakeUp?.()
  }
}
