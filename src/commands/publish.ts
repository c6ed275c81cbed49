import {readFileSync} from 'node:fs'

import {Args, Flags} from '@oclif/core'

import {BqCommand} from '../lib/cli/base-command.js'
import {withBroker} from '../lib/cli/broker.js'
import {sharedFlags} from '../lib/cli/flags.js'
import {readStdinIfPiped} from '../lib/cli/stdin.js'
import {UsageError} from '../lib/errors.js'
import {publishMessages} from '../lib/ops/publish.js'
import type {PublishOptions, PublishResult} from '../lib/ops/publish.js'

export default class Publish extends BqCommand {
  static override summary = 'Publish canonical envelopes for a URN.'
  static override description = `Data comes from --data, --data-file, or stdin (default {}). Prints each message's meta.id. Publishing waits for the broker's durable confirmation.`
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
    broker: sharedFlags.broker,
  }

  async run(): Promise<PublishResult> {
    const {args, flags} = await this.parse(Publish)
    const dataText = await this.dataText(flags.data, flags['data-file'])
    const registry = flags.registry === undefined ? undefined : (await import('../lib/schema/registry.js')).SchemaRegistry.load(flags.registry)
    const options: PublishOptions = {urn: args.urn, dataText, queue: flags.queue, traceId: flags['trace-id'], count: flags.count, delayMs: flags.delay, registry}
    const result = flags['dry-run'] ? await publishMessages(undefined, options, true) : await withBroker(flags.broker, (adapter) => publishMessages(adapter, options, false))
    if (!this.jsonEnabled()) {
      if (result.dryRun) {
        for (const envelope of result.envelopes ?? []) this.log(JSON.stringify(envelope))
        this.logToStderr(`dry run: nothing was published${flags.count > 100 ? ` (showing 100 of ${flags.count})` : ''}`)
      } else {
        for (const id of result.ids) this.log(id)
        this.logToStderr(`published ${result.ids.length} message${result.ids.length === 1 ? '' : 's'} to ${result.queue} on ${result.broker}`)
      }
    }
    return result
  }

  private async dataText(data: string | undefined, dataFile: string | undefined): Promise<string> {
    if (data !== undefined) return data
    if (dataFile !== undefined) {
      try {
        return readFileSync(dataFile, 'utf8')
      } catch (error) {
        throw new UsageError(`cannot read --data-file ${dataFile}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}`)
      }
    }
    const piped = await readStdinIfPiped()
    return piped === undefined || piped.trim() === '' ? '{}' : piped
  }
}
