/**
 * One redrive at a time per topic: a lease kept in a consumer group of its own
 * (`bq-redrive-lock.<topic>`), as the offset-commit metadata of partition 0.
 *
 * Kafka commits are last-writer-wins, with no compare-and-set, so taking the lease is: read (a
 * live claim by someone else refuses at once), write our claim, wait a moment, read again. Two
 * runs that both found it free both write; whichever wrote last is what both read back, so only
 * that one goes on, as long as the gap between a run's first read and its write is shorter than
 * the wait (one round trip against a second). Without the lease, two runs would both publish the
 * same records and only find out at their first commit.
 *
 * A claim lasts `ttlMs` and is renewed every third of it while the run lives; a claim by a dead
 * process on this host is taken over at once, so a crashed or cut-off run does not block the
 * rerun. Expiry compares the claimant's clock with ours (hosts are assumed roughly in sync).
 */
import {randomBytes} from 'node:crypto'

import {UsageError} from '../../errors.js'
import {describeOwner, ownerIsDead, thisHost, type DrainOwner} from '../shared/liveness.js'
import type {KafkaClient} from './client/index.js'

export const DEFAULT_LEASE_TTL_MS = 30_000
/** How long a new claim must stay ours before the run trusts it. */
const SETTLE_MS = 1000
/** Write-and-read-back rounds before a claim that never shows is given up. */
const SETTLE_ATTEMPTS = 3

interface Claim extends DrainOwner {
  token: string
  /** Unix ms after which the claim is void. */
  expires: number
}

export function leaseGroup(topic: string): string {
  return `bq-redrive-lock.${topic}`
}

export class KafkaDrainLease {
  private timer: ReturnType<typeof setInterval> | undefined
  /** Set when a renewal found the claim taken over: the drain stops at its next step. */
  lost = false

  private constructor(
    private readonly client: KafkaClient,
    private readonly topic: string,
    private readonly claim: Claim,
    private readonly ttlMs: number,
  ) {}

  /** Takes the lease on `topic`, or throws a UsageError (`busy`) naming the live holder. */
  static async acquire(client: KafkaClient, topic: string, displayUrl: string, ttlMs = DEFAULT_LEASE_TTL_MS, settleMs = SETTLE_MS): Promise<KafkaDrainLease> {
    const held = await readClaim(client, topic)
    if (held !== undefined && isLive(held)) throw busy(held, topic, displayUrl)
    const claim: Claim = {host: thisHost(), pid: process.pid, since: Date.now(), token: randomBytes(12).toString('hex'), expires: Date.now() + ttlMs}
    // Reading back no claim at all is not a rival (a rival's claim would be there): it is a group
    // coordinator that moved (a broker restarted, a leader election) answering from before our
    // write. Write and read again, a few times, before giving up.
    for (let attempt = 1; attempt <= SETTLE_ATTEMPTS; attempt++) {
      await writeClaim(client, topic, claim)
      await new Promise((resolve) => setTimeout(resolve, settleMs))
      const now = await readClaim(client, topic)
      if (now?.token === claim.token) {
        const lease = new KafkaDrainLease(client, topic, claim, ttlMs)
        lease.startRenewing()
        return lease
      }
      if (now !== undefined) throw busy(now, topic, displayUrl)
    }
    throw new UsageError(`could not take the redrive lease of topic ${topic} on ${displayUrl}: the claim written was not read back ${SETTLE_ATTEMPTS} times (the group coordinator may be moving); try again`, 'busy')
  }

  /** Stops renewing and clears the claim if it is still ours. */
  async release(): Promise<void> {
    this.stopRenewing()
    if (this.lost) return
    const now = await readClaim(this.client, this.topic)
    if (now?.token === this.claim.token) await this.client.commitOffsets(leaseGroup(this.topic), this.topic, [{partition: 0, offset: 0, metadata: ''}])
  }

  stopRenewing(): void {
    if (this.timer !== undefined) clearInterval(this.timer)
    this.timer = undefined
  }

  private startRenewing(): void {
    this.timer = setInterval(() => {
      void this.renew().catch(() => undefined) // connection trouble: retried next tick; the claim may then lapse
    }, Math.max(100, Math.floor(this.ttlMs / 3)))
    // The renewal must never be what keeps the process alive.
    this.timer.unref()
  }

  private async renew(): Promise<void> {
    const now = await readClaim(this.client, this.topic)
    if (now?.token !== this.claim.token) {
      this.lost = true
      this.stopRenewing()
      return
    }
    await writeClaim(this.client, this.topic, {...this.claim, expires: Date.now() + this.ttlMs})
  }
}

function isLive(claim: Claim): boolean {
  return claim.expires > Date.now() && !ownerIsDead(claim)
}

function busy(claim: Claim, topic: string, displayUrl: string): UsageError {
  const left = Math.max(0, Math.ceil((claim.expires - Date.now()) / 1000))
  return new UsageError(`topic ${topic} on ${displayUrl} is being redriven by ${describeOwner(claim)}; its lease (consumer group ${leaseGroup(topic)}) expires in ${left}s unless renewed`, 'busy')
}

async function readClaim(client: KafkaClient, topic: string): Promise<Claim | undefined> {
  const held = (await client.groupOffsets(leaseGroup(topic), topic, [0])).get(0)
  if (held === undefined || held.metadata === '') return undefined
  try {
    const claim = JSON.parse(held.metadata) as Partial<Claim>
    if (typeof claim.token !== 'string' || typeof claim.expires !== 'number' || typeof claim.pid !== 'number' || typeof claim.host !== 'string') return undefined
    return {host: claim.host, pid: claim.pid, since: Number(claim.since), token: claim.token, expires: claim.expires}
  } catch {
    return undefined // not a claim bq wrote: ignored, and overwritten by the next claim
  }
}

async function writeClaim(client: KafkaClient, topic: string, claim: Claim): Promise<void> {
  await client.commitOffsets(leaseGroup(topic), topic, [{partition: 0, offset: 0, metadata: JSON.stringify(claim)}])
}
