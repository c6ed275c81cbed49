import type {Binding, BrokerMessage} from '../brokers/adapter.js'
import {Envelope, EnvelopeDecodeError, decodeEnvelope} from '../envelope/envelope.js'
import {validateEnvelopeText} from '../envelope/validate.js'

/**
 * What bq knows about one message found on a broker: the decoded envelope (if it decodes),
 * the native metadata, and the values every command displays, selects and groups on.
 */
export interface MessageView {
  message: BrokerMessage
  envelope?: Envelope
  /**
   * Why the body is not an envelope (a poison message): not UTF-8 JSON, not an object, or an
   * object that is not an envelope (`notEnvelopeReason`: no URN or no `meta` object). Poison is
   * never rewritten: redrive and replay leave it in place, inspect groups it apart.
   */
  decodeError?: string
  urn?: string
  id?: string
  traceId?: string
  queue?: string
  lang?: string
  createdAt?: number
  /** Body attempts reconciled with the broker's own count, per binding. */
  attempts?: number
  /** The dead_letter block, or what a native DLQ recorded instead. */
  deadLetter?: {reason?: string; error?: string; exception?: string; failedAt?: number; originalQueue?: string; attempts?: number; lang?: string; native?: boolean}
  size: number
  /** No contract errors (warnings allowed). Only computed when asked for. */
  valid?: boolean
}

export function viewOf(message: BrokerMessage, binding: Binding, options: {validate?: boolean} = {}): MessageView {
  const size = message.body.length
  let envelope: Envelope
  try {
    envelope = decodeEnvelope(message.body)
  } catch (error) {
    if (!(error instanceof EnvelopeDecodeError)) throw error
    const native = message.native
    return {
      message,
      size,
      decodeError: error.message,
      urn: native.job,
      id: native.id,
      traceId: native.traceId,
      deadLetter: native.nativeDeadLetter && {...native.nativeDeadLetter, native: true},
      valid: options.validate ? false : undefined,
    }
  }
  const nativeDead = message.native.nativeDeadLetter
  const deadLetter = envelope.deadLetter ?? (nativeDead && {...nativeDead, native: true})
  return {
    message,
    envelope,
    size,
    urn: envelope.urn,
    id: envelope.id,
    traceId: envelope.traceId,
    queue: envelope.queue,
    lang: envelope.lang,
    createdAt: envelope.createdAt,
    attempts: envelope.attempts === undefined ? message.native.attempts : binding.reconcileAttempts(envelope.attempts, message.native),
    deadLetter,
    valid: options.validate ? !validateEnvelopeText(envelope.text).problems.some((p) => p.severity === 'error') : undefined,
  }
}
