/** Paces work to at most `perSecond` items per second on average, measured from the first item. */
export class RateLimiter {
  private started = 0
  private taken = 0

  constructor(private readonly perSecond: number) {}

  /** Waits until `count` more items may start: item k (0-based) starts no earlier than k / rate s. */
  async take(count: number): Promise<void> {
    if (this.started === 0) this.started = Date.now()
    const due = this.started + (this.taken / this.perSecond) * 1000
    this.taken += count
    const wait = due - Date.now()
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
  }
}
