import type {BrokerAdapter, OutgoingMessage} from '../brokers/adapter.js'
import {fieldsOf} from '../envelope/envelope.js'
import type {EnvelopeFields} from '../envelope/fields.js'
import {isUrn} from '../envelope/urn.js'
import {make, MakeError, compactDataText} from '../envelope/make.js'
import type {Envelope} from '../envelope/envelope.js'
import {BqError, UsageError, withResult} from '../errors.js'
import type {SchemaRegistry} from '../schema/registry.js'

/** `bq publish`: make canonical envelopes and publish them with durable confirmation. */

export interface PublishOptions {
  urn: string
  /** The data object as JSON text (kept token for token). */
  dataText: string
  queue: string
  traceId?: string
  count: number
  delayMs?: number
  registry?: SchemaRegistry
}

export interface PublishResult {
  queue: string
  broker: string
  dry_run: boolean
  ids: string[]
  trace_ids: string[]
  /** On a dry run: each message's body exactly as a real publish would send it (UTF-8 text). */
  bodies?: string[]
  /** On a dry run: the same bodies parsed (numbers beyond double precision lose digits here; `bodies` is exact). */
  envelopes?: unknown[]
}

/** What the command does as publishing goes on. */
export interface PublishHooks {
  /** After each batch the broker confirmed, with its ids: print them as they come, so none goes unreported. */
  onConfirmed?: (ids: string[]) => Promise<void> | void
  /** Checked between batches: stop after the current one (a signal). */
  stopRequested?: () => boolean
}

const BATCH = 1000

/** Checks the inputs and the data against the registry before anything is sent. */
export function preparePublish(options: PublishOptions): {dataText: string} {
  if (options.urn.trim() === '') throw new UsageError('the URN is empty: every message needs one, such as urn:babel:orders:created')
  // `bq publish orders …` (a queue name where the URN goes) would publish messages whose URN is "orders".
  if (!isUrn(options.urn)) throw new UsageError(`"${options.urn}" is not a URN (urn:<namespace>:<name>, such as urn:babel:orders:created); the queue goes in --queue, e.g. bq publish urn:babel:orders:created --queue ${queueHint(options.urn)}`)
  if (!Number.isInteger(options.count) || options.count < 1) throw new UsageError('--count must be a positive integer')
  let dataText: string
  try {
    dataText = compactDataText(options.dataText)
  } catch (error) {
    if (error instanceof MakeError) throw new UsageError(error.message)
    throw error
  }
  if (options.registry) {
    const problems = options.registry.check(options.urn, JSON.parse(dataText), '$.data')
    if (problems === undefined) throw new BqError(`no schema is registered for ${options.urn} in ${options.registry.path}; refusing to publish unchecked data`, {code: 'schema.unregistered'})
    if (problems.length > 0) {
      throw new BqError(`data does not match the schema for ${options.urn}: ${problems.map((p) => `${p.path} ${p.message}`).join('; ')}`, {code: 'schema.invalid'})
    }
  }
  return {dataText}
}

/** The argument itself when it could be a queue name, else a placeholder. */
function queueHint(argument: string): string {
  return /^[\w.-]+$/.test(argument) ? argument : '<queue>'
}

export function buildEnvelopes(options: PublishOptions, dataText: string, count: number): Envelope[] {
  const envelopes: Envelope[] = []
  for (let i = 0; i < count; i++) envelopes.push(make(options.urn, dataText, {queue: options.queue, traceId: options.traceId}))
  return envelopes
}

/** A publish's messages: the one place their bytes are made, so a dry run shows exactly what a real run sends. */
export function buildMessages(options: PublishOptions, dataText: string, count: number): Array<OutgoingMessage & {fields: EnvelopeFields}> {
  return buildEnvelopes(options, dataText, count).map((e) => ({body: e.toBuffer(), fields: fieldsOf(e), delayMs: options.delayMs}))
}

export async function publishMessages(adapter: BrokerAdapter | undefined, options: PublishOptions, dryRun: boolean, hooks: PublishHooks = {}): Promise<PublishResult> {
  const {dataText} = preparePublish(options)
  if (options.delayMs !== undefined && adapter && !adapter.capabilities.delay) {
    throw new UsageError(`${adapter.displayUrl} has no delayed delivery; publish without --delay`)
  }
  const result: PublishResult = {queue: options.queue, broker: adapter?.displayUrl ?? '', dry_run: dryRun, ids: [], trace_ids: []}
  if (dryRun) {
    const messages = buildMessages(options, dataText, Math.min(options.count, 100))
    result.bodies = messages.map((m) => m.body.toString('utf8'))
    result.envelopes = result.bodies.map((body) => JSON.parse(body))
    result.ids = messages.map((m) => m.fields.id)
    result.trace_ids = messages.map((m) => m.fields.traceId)
    return result
  }
  if (!adapter) throw new Error('publish needs a broker')
  for (let sent = 0; sent < options.count && !hooks.stopRequested?.(); sent += BATCH) {
    const outgoing = buildMessages(options, dataText, Math.min(BATCH, options.count - sent))
    try {
      await adapter.publish(options.queue, outgoing)
    } catch (error) {
      // What earlier batches sent is part of the failure's report (--json lists the ids).
      throw sent === 0 ? error : withResult(error, result)
    }
    const ids = outgoing.map((m) => m.fields.id)
    result.ids.push(...ids)
    result.trace_ids.push(...outgoing.map((m) => m.fields.traceId))
    await hooks.onConfirmed?.(ids)
    // A broker that confirms synchronously (the embedded store) never yields to the event loop,
    // where signals are delivered: yield, so a Ctrl-C or SIGTERM is seen between batches.
    await new Promise((resolve) => setImmediate(resolve))
  }
  return result
}
