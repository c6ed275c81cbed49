/**
 * Whether the process that owns a drain session is still running. Used by the embedded and
 * Redis adapters to tell a crashed run (its reservations can be returned) from a live one
 * (they must not be touched).
 */
import {hostname} from 'node:os'

/** This machine's name, recorded next to the pid so a pid is only judged on its own host. */
export function thisHost(): string {
  return hostname()
}

/**
 * True unless the process certainly does not exist. A pid we may not signal (EPERM) belongs to a
 * live process of another user; a reused pid reads as alive, which errs on the safe side
 * (refusing) rather than returning a live run's messages.
 */
export function isProcessAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH'
  }
}

/** Who holds a drain, for refusal messages and liveness checks. */
export interface DrainOwner {
  host: string
  pid: number
  /** Unix ms. */
  since: number
}

/** A drain owned by a process on this host that has exited: its reservations can be returned. */
export function ownerIsDead(owner: DrainOwner): boolean {
  return owner.host === thisHost() && !isProcessAlive(owner.pid)
}

export function describeOwner(owner: DrainOwner): string {
  const since = Number.isFinite(owner.since) ? ` since ${new Date(owner.since).toISOString()}` : ''
  return `pid ${owner.pid} on host ${owner.host}${since}`
}
