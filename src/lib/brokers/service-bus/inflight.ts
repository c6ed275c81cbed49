/**
 * `bq inflight ls` on Service Bus: `active`, `scheduled` and `deferred` messages of an entity.
 *
 * What Service Bus lets a client see: a peek (com.microsoft:peek-message) returns every message
 * with its state (active, deferred or scheduled), including messages a receiver holds locked,
 * but not whether one is locked (peek.ts). The runtime properties of the management (ATOM) API
 * count ActiveMessageCount, ScheduledMessageCount, DeadLetterMessageCount and the transfer counts;
 * they have no deferred count and no locked count either. So no number of Service Bus tells a
 * peek-locked message from an available one: both are `active`.
 *
 * bq peeks (bodies omitted) up to PEEK_LIMIT messages and counts them by state. A larger entity
 * takes `active` and `scheduled` from the runtime properties where the key may read them, and
 * says that its deferred count (and, without the management API, every count) is a lower bound.
 */
import type {ServiceBusReceiver} from '@azure/service-bus'

import type {InflightGauge, InflightReport} from '../adapter.js'
import {PEEK_PAGE, firstSequenceNumber, type SequenceNumber} from './peek.js'

/** Messages a count peeks at most before it trusts the runtime counts (or stops, a lower bound). */
export const PEEK_LIMIT = 10_000

export const SERVICE_BUS_COUNTS_ONLY =
  'Service Bus keeps a peek-lock where no client can read it: a peek shows each message\'s state but not whether a receiver holds it, so locked messages are counted among the active ones and not listed'
export const SERVICE_BUS_RETURNS_ITSELF =
  'Service Bus returns a peek-locked message itself when its lock expires (the entity\'s LockDuration, unless the receiver renews it) or its receiver abandons it; a deferred message never returns by itself (only a receive by its sequence number takes it), and a scheduled one becomes active when due'

const HELP = {
  active: 'ready for a receiver or peek-locked by one (Service Bus does not tell them apart)',
  scheduled: 'sent for a later time, not visible to receivers until then',
  deferred: 'set aside by a receiver; only a receive by sequence number takes it',
}

export interface RuntimeCounts {
  active: number
  /** Absent where the SDK reads none (a subscription). */
  scheduled?: number
}

/** Counts by state; `runtime` is asked only when the peek stops before the end. */
export async function serviceBusInflight(peeker: ServiceBusReceiver, runtime: () => Promise<RuntimeCounts | undefined>): Promise<InflightReport> {
  const counts = {active: 0, scheduled: 0, deferred: 0}
  let next: SequenceNumber = firstSequenceNumber()
  let seen = 0
  let complete = false
  while (seen < PEEK_LIMIT) {
    const page = await peeker.peekMessages(PEEK_PAGE, {fromSequenceNumber: next, omitMessageBody: true} as Parameters<ServiceBusReceiver['peekMessages']>[1])
    if (page.length === 0) {
      complete = true
      break
    }
    for (const message of page) {
      if (message.sequenceNumber !== undefined) next = message.sequenceNumber.add(1)
      if (message.state === 'active' || message.state === 'scheduled' || message.state === 'deferred') counts[message.state]++
      seen++
    }
  }
  const help = {...HELP}
  if (!complete) {
    const exact = await runtime()
    const bound = ` (at least: bq peeks ${PEEK_LIMIT} messages at most)`
    if (exact === undefined) help.active += bound
    else counts.active = exact.active
    if (exact?.scheduled === undefined) help.scheduled += bound
    else counts.scheduled = exact.scheduled
    help.deferred += bound
  }
  const gauges: InflightGauge[] = (['active', 'scheduled', 'deferred'] as const).map((name) => ({name, value: counts[name], help: help[name]}))
  return {gauges, countsOnly: SERVICE_BUS_COUNTS_ONLY, returnsItself: SERVICE_BUS_RETURNS_ITSELF}
}
