import {isUtf8} from 'node:buffer'

import {Args, Flags} from '@oclif/core'

import type {BrokerAdapter} from '../lib/brokers/adapter.js'
import {BqCommand} from '../lib/cli/base-command.js'
import {REFUSED_EXIT} from '../lib/cli/exit-help.js'
import {withBroker} from '../lib/cli/broker.js'
import {sharedFlags} from '../lib/cli/flags.js'
import {stopOnInterrupt} from '../lib/cli/interrupt.js'
import {readInputFile, readStdinIfPiped} from '../lib/cli/stdin.js'
import {BqError, InterruptedError, UsageError} from '../lib/errors.js'
import {recordRun} from '../lib/ledger/record.js'
import type {RunTally} from '../lib/ledger/record.js'
import {publishMessages} from '../lib/ops/publish.js'
import type {PublishOptions, PublishResult} from '../lib/ops/publish.js'
import {startProgress} from '../lib/output/progress.js'
import {OutputWriter} from '../lib/output/writer.js'

export default class Publish extends BqCommand {
  static override summary = 'Publish canonical envelopes for a URN.'
  static override description = `Data comes from --data, --data-file, or stdin (on a terminal, {} when none is given; an empty or closed stdin is refused); it must be valid UTF-8 JSON. The argument must be a URN (urn:<namespace>:<name>); the queue is --queue. Prints each message's meta.id as the broker confirms it (durably), batch by batch.

Exit status: 0 when every message was published, 1 when publishing failed (the ids printed are the ones sent), 2 for usage errors, 4 when the broker cannot be reached, ${REFUSED_EXIT}, 130 when interrupted (Ctrl-C), 143 on SIGTERM, 129 on SIGHUP: each stops after the current batch and says how many were sent.`
  static override examples = [
    `<%= config.bin %> publish urn:babel:orders:created --data '{"order_id":1042}' --queue orders`,
    'echo \'{"order_id":1}\' | <%= config.bin %> publish urn:babel:orders:created -q orders -b "$STAGING_BROKER"',
    '<%= config.bin %> publish urn:babel:orders:created -d \'{"order_id":1,"amount":5}\' --registry registry.json --dry-run',
  ]
  static override args = {urn: Args.string({description: 'the message URN, e.g. urn:babel:orders:created', required: true})}
  static override flags = {
    data: Flags.string({char: 'd', description: 'the data object as JSON', exclusive: ['data-file']}),
    'data-file': Flags.string({description: 'read the data object from this file'}),
    queue: Flags.string({char: 'q', description: 'queue to publish to (also meta.queue)', default: 'default'}),
    'trace-id': Flags.string({description: 'continue this trace instead of starting a new one'}),
    delay: Flags.integer({description: 'deliver after this many milliseconds (brokers with delayed delivery)', min: 0}),
    count: Flags.integer({char: 'c', description: 'publish this many copies, each with its own meta.id', default: 1, min: 1}),
    registry: sharedFlags.registry,
    'dry-run': sharedFlags.dryRun,
    reason: sharedFlags.reason,
    broker: sharedFlags.broker,
    context: sharedFlags.context,
    timeout: sharedFlags.timeout,
  }

  async run(): Promise<PublishResult & {run_id?: string}> {
    const {args, flags} = await this.parse(Publish)
    const dataText = await this.dataText(flags.data, flags['data-file'])
    const registry = flags.registry === undefined ? undefined : (await import('../lib/schema/registry.js')).SchemaRegistry.load(flags.registry)
    const options: PublishOptions = {urn: args.urn, dataText, queue: flags.queue, traceId: flags['trace-id'], count: flags.count, delayMs: flags.delay, registry}
    if (flags['dry-run']) {
      const result = await publishMessages(undefined, options, true)
      if (!this.jsonEnabled()) {
        // The bodies as a real publish sends them, byte for byte (re-serialising would round 99.90 and big integers).
        for (const body of result.bodies ?? []) this.log(body)
        this.logToStderr(`dry run: nothing was published${flags.count > 100 ? ` (showing 100 of ${flags.count})` : ''}`)
      }
      return result
    }
    const json = this.jsonEnabled()
    return withBroker(flags.broker, (adapter) => {
      const info = {command: 'publish', broker: adapter.displayUrl, target: flags.queue, selection: {urn: args.urn, count: flags.count, delay_ms: flags.delay ?? null}, reason: flags.reason}
      const tally = (result: unknown): RunTally => (isPublishResult(result) ? {counts: {published: result.ids.length}, ids: {published: result.ids}} : {})
      return recordRun(info, async (run) => ({...(await this.publish(adapter, options)), ...(run.recorded ? {run_id: run.id} : {})}), {warn: (text) => this.warn(text), tally, log: json ? undefined : (line) => this.logToStderr(line)})
    }, {timeoutSeconds: flags.timeout, warn: (message) => this.warn(message)})
  }

  /**
   * Publishes batch by batch, printing each id once the broker confirmed it, so a run that ends
   * early (a signal, a lost broker) has reported everything it sent. Ctrl-C, SIGTERM or SIGHUP
   * stops after the current batch.
   */
  private async publish(adapter: BrokerAdapter, options: PublishOptions): Promise<PublishResult> {
    const json = this.jsonEnabled()
    // The progress line first: on a signal it clears itself before the interrupt's message.
    const progress = options.count > 1 ? startProgress({unit: 'published', total: options.count, json}) : undefined
    const out = new OutputWriter()
    out.statusLine = progress
    const interrupt = stopOnInterrupt()
    const sent = (n: number) => `published ${n}${n < options.count ? ` of ${options.count}` : ''} message${options.count === 1 ? '' : 's'} to ${options.queue} on ${adapter.displayUrl}`
    let result: PublishResult
    let confirmed = 0
    try {
      result = await publishMessages(adapter, options, false, {
        stopRequested: interrupt.requested,
        onConfirmed: async (ids) => {
          confirmed += ids.length
          progress?.update(confirmed)
          if (json) return
          for (const id of ids) out.line(id)
          await out.flush()
        },
      })
    } catch (error) {
      progress?.stop()
      // The ids of the batches confirmed before the failure are printed; say how many they were.
      const before = error instanceof BqError && isPublishResult(error.result) ? error.result.ids.length : 0
      if (!json && before > 0) this.logToStderr(`${sent(before)} before the failure`)
      throw error
    } finally {
      progress?.stop()
      interrupt.dispose()
    }
    const signal = interrupt.signal()
    if (signal !== undefined && result.ids.length < options.count) {
      const message = `interrupted (${signal}): ${sent(result.ids.length)}; the rest were not sent`
      if (!json) this.logToStderr(message)
      throw new InterruptedError(message, result, signal)
    }
    if (!json) this.logToStderr(sent(result.ids.length))
    return result
  }

  private async dataText(data: string | undefined, dataFile: string | undefined): Promise<string> {
    if (data !== undefined) return data
    const bytes = dataFile === undefined ? await readStdinIfPiped() : await readInputFile(dataFile, '--data-file')
    if (bytes === undefined) return '{}'
    // Decoding would turn bad bytes into U+FFFD and publish data the input never held.
    if (!isUtf8(bytes)) throw new UsageError(`${dataFile === undefined ? 'stdin' : `--data-file ${dataFile}`} is not valid UTF-8 (JSON data must be): nothing was published`, 'encoding.not_utf8')
    const text = bytes.toString('utf8')
    // An empty pipe is a producer that failed, not a wish for {}: publishing {} would hide it.
    if (dataFile === undefined && text.trim() === '') throw new UsageError("stdin is empty and there is no --data: give the data with --data '{…}' (--data '{}' for none) or pipe it in; nothing was published", 'input.empty')
    return text
  }
}

/** The report publishMessages attaches to a failure after some batches were sent. */
function isPublishResult(result: unknown): result is PublishResult {
  return typeof result === 'object' && result !== null && Array.isArray((result as {ids?: unknown}).ids)
}
