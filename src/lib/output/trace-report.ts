import type {Sighting} from '../ops/trace-scan.js'
import type {TraceRun} from '../ops/trace-ledger.js'
import {otelTraceIdOf} from '../ops/trace-id.js'
import {deadLetterJson} from './message-rows.js'
import {formatAge, isoTime} from './table.js'

/** How `bq trace` shows what it found: one row (or JSON object) per copy, oldest first, then the runs. */

/** A sighting with the broker it was made on. */
export interface BrokerSighting extends Sighting {
  /** The context's name, when the broker was named by one. */
  context?: string
  broker: string
}

/** When the copy was made, for ordering: meta.created_at, else the broker's enqueue time. */
function bornAt(s: BrokerSighting): number {
  return s.view.createdAt ?? s.view.message.enqueuedAt ?? Number.POSITIVE_INFINITY
}

/** Oldest first; copies of one age keep the order they were found in. */
export function oldestFirst(sightings: BrokerSighting[]): BrokerSighting[] {
  return sightings.map((s, i) => ({s, i})).sort((a, b) => bornAt(a.s) - bornAt(b.s) || a.i - b.i).map(({s}) => s)
}

export const SIGHTING_HEAD = ['broker', 'queue', 'state', '#', 'attempts', 'reason', 'exception', 'age', 'urn', 'id']

export function sightingRow(s: BrokerSighting, now: number): string[] {
  const born = bornAt(s)
  const dead = s.view.deadLetter
  return [
    s.context ?? s.broker,
    s.source.queue,
    s.place === undefined ? s.source.state : `${s.source.state} (${s.place})`,
    s.view.message.position ?? '',
    s.view.attempts === undefined ? '-' : String(s.view.attempts),
    dead?.reason ?? '-',
    dead?.exception ?? '-',
    formatAge(Number.isFinite(born) ? now - born : undefined),
    s.view.urn ?? '-',
    s.view.id ?? '-',
  ]
}

/** The JSON shape of one copy (documented in docs/trace.md). */
export function sightingJson(s: BrokerSighting, now: number): Record<string, unknown> {
  const born = bornAt(s)
  const traceId = s.view.traceId
  return {
    context: s.context ?? null,
    broker: s.broker,
    queue: s.source.queue,
    state: s.source.state,
    place: s.place ?? null,
    role: s.source.role ?? null,
    position: s.view.message.position ?? null,
    attempts: s.view.attempts ?? null,
    dead_letter: deadLetterJson(s.view),
    exception: s.view.deadLetter?.exception ?? null,
    age_seconds: Number.isFinite(born) ? Math.max(0, Math.round((now - born) / 1000)) : null,
    created_at: isoTime(s.view.createdAt) ?? null,
    enqueued_at: isoTime(s.view.message.enqueuedAt) ?? null,
    urn: s.view.urn ?? null,
    id: s.view.id ?? null,
    trace_id: traceId ?? null,
    otel_trace_id: traceId === undefined ? null : otelTraceIdOf(traceId),
    matched_by: s.matchedBy,
    poison: s.view.decodeError ?? null,
  }
}

export const RUN_HEAD = ['run', 'started', 'command', 'source', 'target', 'outcome', 'ids']

export function runRow(run: TraceRun): string[] {
  return [
    run.id.slice(0, 8),
    run.started_at,
    run.command,
    run.source ?? '-',
    run.target ?? '-',
    run.outcome,
    Object.entries(run.ids).map(([what, ids]) => `${what} ${ids.length}`).join(', '),
  ]
}
