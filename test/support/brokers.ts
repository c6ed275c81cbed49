import type {TestContext} from 'node:test'
import {createConnection} from 'node:net'

/** True when running under CI, where a missing broker is a failure, never a skip. */
export const underCI = process.env.CI === 'true' || process.env.CI === '1'

/** Resolves true when something accepts TCP connections on host:port within the timeout. */
export function portOpen(host: string, port: number, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({host, port})
    const done = (ok: boolean) => {
      socket.destroy()
      resolve(ok)
    }
    socket.setTimeout(timeoutMs, () => done(false))
    socket.once('connect', () => done(true))
    socket.once('error', () => done(false))
  })
}

/**
 * Checks that a broker answers. Outside CI a missing broker skips the test with a note;
 * under CI=true it fails the test, so integration tests can never be skipped silently there.
 */
export async function requireBroker(t: TestContext, name: string, host: string, port: number): Promise<boolean> {
  if (await portOpen(host, port)) return true
  const message = `${name} is not reachable on ${host}:${port}`
  if (underCI) throw new Error(`${message} (CI=true: integration tests must not be skipped)`)
  t.skip(message)
  return false
}

/** A queue name no other test (or earlier run) uses. */
export function uniqueQueue(prefix: string): string {
  return `bqtest-${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`
}
