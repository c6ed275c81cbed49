/**
 * Deciding each message's fate in a batch (redrive and copy): decode, select, change, reset, and
 * group the copies by target queue. Nothing is moved or reported here.
 */
import type {Binding, BrokerMessage, OutgoingMessage, ReservedMessage} from '../brokers/adapter.js'
import {fieldsOf, resetForRedriveBytes} from '../envelope/envelope.js'
import type {Envelope} from '../envelope/envelope.js'
import {tooLarge} from './batch-sizer.js'
import {matchesAll} from './match.js'
import {viewOf} from './message-view.js'
import type {MessageView} from './message-view.js'
import type {About, HoldRule, RedriveOutcome} from './redrive-types.js'
import type {Selector} from './selector.js'

/** What a message says about itself without decoding it (its native metadata). */
export function aboutUndecoded(message: BrokerMessage): About {
  const native = message.native
  return {id: native.id ?? null, trace_id: native.traceId ?? null, urn: native.job ?? null, reason: native.nativeDeadLetter?.reason ?? null}
}

/** The per-message reason a target that is the DLQ being drained is refused. */
export function intoItself(queue: string): string {
  return `its target ${queue} is the dead-letter queue being redriven (a move there would only strip its dead_letter block): left in place; use --to`
}

export function aboutOf(view: MessageView): About {
  return {id: view.id ?? null, trace_id: view.traceId ?? null, urn: view.urn ?? null, reason: view.deadLetter?.reason ?? null}
}

export type Group<M extends BrokerMessage = ReservedMessage> = Array<{message: M; about: About; outgoing: OutgoingMessage}>

/** What decides a message's fate in a redrive (or a copy): the selection and where it goes. */
export interface PlanRules {
  binding: Binding
  selectors: Selector[]
  bypass: boolean
  /**
   * A selected message's envelope as it will be sent (after --patch, if any) and the queue it goes
   * to (--to, else its original queue; undefined when none is recorded), or why it cannot change.
   */
  change: (view: MessageView) => {envelope: Envelope; queue: string | undefined} | {error: string}
  /** The run ledger's id, stamped as the bq-run-id header on every copy. */
  runId?: string
  /** True when a copy to this queue would land on the DLQ being read. */
  intoSource: (queue: string) => boolean
  /** Selected messages it holds back stay on the DLQ with its outcome. */
  hold?: HoldRule
}

/**
 * Decodes, selects and resets a batch; changes nothing and reports nothing yet. `kept` stay on
 * the DLQ (with their outcome); `groups` are the reset copies to publish, per target queue.
 */
export function planBatch<M extends BrokerMessage>(batch: M[], rules: PlanRules) {
  const kept: Array<{message: M; about: About; outcome: RedriveOutcome; target?: string; error?: string}> = []
  const groups = new Map<string, Group<M>>()
  for (const message of batch) {
    const large = tooLarge(message)
    if (large !== undefined) {
      kept.push({message, about: aboutUndecoded(message), outcome: 'failed', error: large})
      continue
    }
    const view = viewOf(message, rules.binding)
    if (!view.envelope) {
      kept.push({message, about: aboutOf(view), outcome: 'poison', error: view.decodeError})
      continue
    }
    if (!matchesAll(view, rules.selectors)) {
      kept.push({message, about: aboutOf(view), outcome: 'skipped'})
      continue
    }
    const held = rules.hold?.(view)
    if (held !== undefined) {
      kept.push({message, about: aboutOf(view), outcome: held.outcome, error: held.error})
      continue
    }
    const changed = rules.change(view)
    if ('error' in changed) {
      kept.push({message, about: aboutOf(view), outcome: 'failed', error: changed.error})
      continue
    }
    const queue = changed.queue
    if (queue === undefined) {
      kept.push({message, about: aboutOf(view), outcome: 'failed', error: 'no original queue recorded: use --to'})
      continue
    }
    if (rules.intoSource(queue)) {
      kept.push({message, about: aboutOf(view), outcome: 'failed', target: queue, error: intoItself(queue)})
      continue
    }
    const body = resetForRedriveBytes(changed.envelope)
    // The reset copy differs only in attempts, so its projection needs no second parse.
    const fields = fieldsOf(changed.envelope)
    fields.attempts = 0
    const group = groups.get(queue) ?? []
    // Only what the report needs is kept until the move: the view and its tree die young.
    const outgoing: OutgoingMessage = {body, fields, bypass: rules.bypass, republish: true, ...(rules.runId === undefined ? {} : {runId: rules.runId})}
    // The message's own headers (traceparent and the like) travel with it, to this broker or another.
    if (message.appHeaders !== undefined && Object.keys(message.appHeaders).length > 0) outgoing.appHeaders = message.appHeaders
    group.push({message, about: aboutOf(view), outgoing})
    groups.set(queue, group)
  }
  return {kept, groups}
}
