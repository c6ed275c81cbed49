/**
 * The envelope values a broker binding projects onto native metadata.
 * Extracted from a decoded envelope by the codec; adapters and projections never parse bodies.
 */
export interface EnvelopeFields {
  /** The URN (`job`, or the inbound alias `urn`). */
  job: string
  traceId: string
  /** `meta.id` */
  id: string
  /** `meta.queue` */
  queue: string
  /** `meta.lang` */
  lang: string
  /** `meta.schema_version` */
  schemaVersion: number
  /** `meta.created_at`, Unix epoch milliseconds. */
  createdAt: number
  /** Top-level `attempts`. */
  attempts: number
}

/** What a binding can recover from native metadata alone (the inverse projection). Absent = not carried. */
export interface NativeFields {
  job?: string
  traceId?: string
  id?: string
  lang?: string
  schemaVersion?: number
  createdAt?: number
  /** The attempts value the native metadata carries (before reconciliation with the body). */
  attempts?: number
  /** The broker's own delivery counter, in the broker's own base (see each binding). */
  deliveryCount?: number
  /** True when the out-of-band `bq-replay-bypass` marker is present. */
  replayBypass?: boolean
  /**
   * Why the broker itself dead-lettered the message, for native DLQs whose messages carry no
   * `dead_letter` block (RabbitMQ `x-death`, SQS redrive policy, Service Bus `DeadLetterReason`).
   */
  nativeDeadLetter?: {reason?: string; error?: string; originalQueue?: string; failedAt?: number}
}

/** The out-of-band replay marker (spec-redrive-and-replay.md, ADR-0027). */
export const REPLAY_BYPASS_HEADER = 'bq-replay-bypass'

/** The bq run (its ledger id, `bq runs show`) that redrove or replayed a message: a consumer's logs lead back to it. */
export const RUN_ID_HEADER = 'bq-run-id'
