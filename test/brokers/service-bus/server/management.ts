/**
 * The `<entity>/$management` request-response node of the test server: the operations of
 * Microsoft's "AMQP 1.0 in Azure Service Bus: request-response-based operations" that the
 * JavaScript SDK uses for peek, lock renewal, scheduling, deferral and settlement by lock token.
 * Responses carry `statusCode` / `statusDescription` application properties, as that document
 * specifies for this node (the `$cbs` node uses `status-code` instead).
 */
import {randomUUID} from 'node:crypto'

import {ensureMessageId, encodeMessage, longValue, parseMessage, types, annotationValue, uuidText, type Typed} from './amqp-codec.js'
import {NotAllowedError, type Namespace, type StoredMessage, type SubQueue} from './entities.js'
import {deliveryAnnotations} from './stamps.js'

export interface ManagementResponse {
  statusCode: number
  statusDescription: string
  errorCondition?: string
  body?: Typed
}

const ok = (body?: Typed): ManagementResponse => ({statusCode: 200, statusDescription: 'OK', body})
const fail = (statusCode: number, errorCondition: string, statusDescription: string): ManagementResponse => ({statusCode, statusDescription, errorCondition})

export function handleManagement(ns: Namespace, queue: SubQueue, operation: unknown, body: Record<string, unknown> | undefined): ManagementResponse {
  const request = body ?? {}
  try {
    switch (operation) {
      case 'com.microsoft:peek-message':
        return peek(queue, request)
      case 'com.microsoft:renew-lock':
        return renewLock(ns, request)
      case 'com.microsoft:schedule-message':
        return schedule(ns, queue, request)
      case 'com.microsoft:cancel-scheduled-message':
        return cancelScheduled(queue, request)
      case 'com.microsoft:receive-by-sequence-number':
        return receiveBySequence(queue, request)
      case 'com.microsoft:update-disposition':
        return updateDisposition(ns, request)
      default:
        return fail(501, 'com.microsoft:not-supported', `operation ${String(operation)} is not implemented by the test server`)
    }
  } catch (error) {
    if (error instanceof NotAllowedError) return fail(400, 'amqp:not-allowed', error.message)
    return fail(500, 'amqp:internal-error', error instanceof Error ? error.message : String(error))
  }
}

function peek(queue: SubQueue, request: Record<string, unknown>): ManagementResponse {
  const from = longValue(request['from-sequence-number'] ?? 1)
  const count = Number(request['message-count'] ?? 1)
  const omitBody = request['omit-message-body'] === true
  const found = queue.peek(from, Math.max(1, count))
  if (found.length === 0) return {statusCode: 204, statusDescription: 'No messages'}
  const messages = found.map((message) => types.wrap_map({message: types.wrap_binary(encodeMessage(message.parts, {deliveryCount: message.deliveryCount, annotations: deliveryAnnotations(message, {peeked: true}), omitBody}))}))
  return ok(types.wrap_map({messages: types.wrap_list(messages)}))
}

function lockTokens(request: Record<string, unknown>): string[] {
  const tokens = request['lock-tokens']
  if (!Array.isArray(tokens)) return []
  return tokens.map((token) => (Buffer.isBuffer(token) ? uuidText(token) : String(token).toLowerCase()))
}

function renewLock(ns: Namespace, request: Record<string, unknown>): ManagementResponse {
  const expirations: number[] = []
  for (const token of lockTokens(request)) {
    const until = ns.renew(token)
    if (until === undefined) return fail(410, 'com.microsoft:message-lock-lost', `the lock ${token} is lost: it expired or the message was settled`)
    expirations.push(until)
  }
  return ok(types.wrap_map({expirations: types.wrap_array(expirations, 0x83)}))
}

function schedule(ns: Namespace, queue: SubQueue, request: Record<string, unknown>): ManagementResponse {
  const entries = Array.isArray(request.messages) ? (request.messages as Array<Record<string, unknown>>) : []
  const sequenceNumbers: number[] = []
  for (const entry of entries) {
    const raw = entry.message
    if (!Buffer.isBuffer(raw)) return fail(400, 'amqp:invalid-field', 'schedule-message entry without a message')
    const parts = ensureMessageId(parseMessage(raw), randomUUID)
    const when = annotationValue(parts, 'x-opt-scheduled-enqueue-time')
    const at = when instanceof Date ? when.getTime() : typeof when === 'number' ? when : Date.now()
    const stored = queue.enqueue(parts, typeof entry['message-id'] === 'string' ? entry['message-id'] : undefined, at)
    sequenceNumbers.push(stored?.seq ?? 0)
  }
  void ns
  return ok(types.wrap_map({'sequence-numbers': types.wrap_array(sequenceNumbers.map(longBytes), 0x81)}))
}

/** A long as 8 big-endian bytes, the form rhea's array encoder takes for long elements. */
function longBytes(n: number): Buffer {
  const out = Buffer.alloc(8)
  out.writeBigInt64BE(BigInt(n))
  return out
}

function cancelScheduled(queue: SubQueue, request: Record<string, unknown>): ManagementResponse {
  const seqs = Array.isArray(request['sequence-numbers']) ? (request['sequence-numbers'] as unknown[]).map(longValue) : []
  for (const seq of seqs) {
    const message = queue.bySequence(seq)
    if (message !== undefined && message.state === 'scheduled') queue.remove(message)
  }
  return ok()
}

function receiveBySequence(queue: SubQueue, request: Record<string, unknown>): ManagementResponse {
  const seqs = Array.isArray(request['sequence-numbers']) ? (request['sequence-numbers'] as unknown[]).map(longValue) : []
  const receiveAndDelete = Number(request['receiver-settle-mode'] ?? 1) === 0
  const out: Typed[] = []
  for (const seq of seqs) {
    const message: StoredMessage | undefined = queue.bySequence(seq)
    if (message === undefined || message.state !== 'deferred') return fail(404, 'com.microsoft:message-not-found', `no deferred message with sequence number ${seq}`)
    let token: string | undefined
    if (receiveAndDelete) queue.remove(message)
    else token = queue.lock(message).token
    const encoded = encodeMessage(message.parts, {deliveryCount: message.deliveryCount, annotations: deliveryAnnotations(message, {})})
    const entry: Record<string, Typed> = {message: types.wrap_binary(encoded)}
    if (token !== undefined) entry['lock-token'] = types.wrap_uuid(Buffer.from(token.replace(/-/g, ''), 'hex'))
    out.push(types.wrap_map(entry))
  }
  return ok(types.wrap_map({messages: types.wrap_list(out)}))
}

function updateDisposition(ns: Namespace, request: Record<string, unknown>): ManagementResponse {
  const status = String(request['disposition-status'] ?? '')
  for (const token of lockTokens(request)) {
    const entry = ns.locked(token)
    if (entry === undefined) return fail(410, 'com.microsoft:message-lock-lost', `the lock ${token} is lost: it expired or the message was settled`)
    if (status === 'completed') entry.queue.remove(entry.message)
    else if (status === 'abandoned') entry.queue.abandon(entry.message)
    else if (status === 'defered') entry.queue.defer(entry.message)
    else if (status === 'suspended') entry.queue.moveToDeadLetter(entry.message, stringOrUndefined(request['deadletter-reason']), stringOrUndefined(request['deadletter-description']))
    else return fail(400, 'amqp:invalid-field', `unknown disposition-status ${status}`)
  }
  return ok()
}

function stringOrUndefined(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined
}
