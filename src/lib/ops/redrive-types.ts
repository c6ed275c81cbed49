/**
 * What a run that drains a DLQ (redrive, copy, purge) takes and reports: the request, the report,
 * one item per message. Its own module so the engines (redrive.ts, copy.ts, purge.ts, replay.ts)
 * and the output share them without importing each other.
 */
import type {BrokerAdapter} from '../brokers/adapter.js'
import type {Envelope} from '../envelope/envelope.js'
import type {MessageView} from './message-view.js'
import type {Selector} from './selector.js'

/**
 * Why a selected message was held back on the DLQ on purpose (ops/hold.ts): `looping` (redriven
 * --max-redrives times before), `still_invalid` (fails its URN's schema, --only-passing),
 * `returned` (a canary moved it and it came back: later stages leave it alone).
 */
export type HoldOutcome = 'looping' | 'still_invalid' | 'returned'

export type RedriveOutcome = 'redriven' | 'would_redrive' | 'skipped' | 'poison' | 'failed' | HoldOutcome

/** Decides, for a selected message, whether it stays on the DLQ on purpose, and why. */
export type HoldRule = (view: MessageView) => {outcome: HoldOutcome; error?: string} | undefined

export interface RedriveItem {
  id: string | null
  trace_id: string | null
  urn: string | null
  reason: string | null
  target: string | null
  outcome: RedriveOutcome
  error?: string
  /** A dry run with a transform (--patch): the bytes the message would be sent as, for the first few. */
  envelope?: string
}

/**
 * A change made to each selected envelope before the reset (`--patch`, `dlq edit`): the new
 * envelope, or why this message cannot be changed (it then stays on the DLQ, reported failed).
 */
export type EnvelopeTransform = (envelope: Envelope) => {envelope: Envelope} | {error: string}

export interface RedriveCounts {
  examined: number
  redriven: number
  would_redrive: number
  skipped: number
  poison: number
  failed: number
  /** Present when the run holds messages back on purpose (HoldOutcome). */
  looping?: number
  still_invalid?: number
  returned?: number
}

/** What every run that drains a DLQ takes (redrive, copy, purge). */
export interface DrainRunRequest {
  source: BrokerAdapter
  dlq: string
  selectors: Selector[]
  /** 0 = every message present at the start. */
  max: number
  dryRun: boolean
  /** The most messages per batch (default 500); fewer when the messages are large (see BATCH_BYTES). */
  batchSize?: number
  /** Called for every message as its outcome is decided (for --json items and progress). */
  onItem?: (item: RedriveItem) => void
  /** Set to stop after the current batch (SIGINT). */
  stopRequested?: () => boolean
  /**
   * The operator accepts that, on a queue that counts deliveries (`readsCostDeliveries`), every
   * message the run takes and leaves behind (unselected, poison, not movable) costs one delivery.
   * Without it such a run is refused before anything is read; a dry run there is always refused.
   */
  acceptDeliveryCost?: boolean
}

export interface RedriveRequest extends DrainRunRequest {
  /** Where copies go; the source broker when absent. */
  target?: BrokerAdapter
  /** Sandbox routing: every copy to this queue instead of its original one. */
  toQueue?: string
  /** Messages per second. */
  rate?: number
  bypass: boolean
  /** The ledger id of this run, stamped on each copy as `bq-run-id` where the binding has headers. */
  runId?: string
  /** Applied to each selected envelope before the reset; routing then reads the changed envelope. */
  transform?: EnvelopeTransform
  /** Publish the reset copies and leave every original on the DLQ (`--copy`). */
  copy?: boolean
  /** Selected messages this rule holds back stay on the DLQ with its outcome (loop guard, --only-passing, a canary's returned ones). */
  hold?: HoldRule
  /** The outcomes `hold` can give: counted from zero so the report names them. */
  holdOutcomes?: HoldOutcome[]
  /** Move at most this many messages (a canary stage); the drain stops once they are taken. */
  moveLimit?: number
}

export interface RedriveReport {
  dlq: string
  source: string
  target: string
  dry_run: boolean
  counts: RedriveCounts
  /** The run stopped early (interrupted, or the target failed). */
  stopped_early: boolean
  stop_reason?: string
  /** The run stopped because the broker refused the credentials or a permission (exit 6, not 3). */
  stop_refusal?: 'auth' | 'permission'
  /**
   * Present when a run ended part-way with copies whose originals may still be on the DLQ (at
   * least once: the copy was sent, the original's removal was not confirmed, e.g. the connection
   * was lost): how many messages may now be on both. A next redrive would send them again.
   */
  possible_duplicates?: number
}

/** What an item reports about its message. */
export type About = Pick<RedriveItem, 'id' | 'trace_id' | 'urn' | 'reason'>
