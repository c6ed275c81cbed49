import {Args, Flags} from '@oclif/core'

import {BqCommand} from '../../lib/cli/base-command.js'
import {withBroker} from '../../lib/cli/broker.js'
import {dlqName} from '../../lib/cli/dlq-name.js'
import {sharedFlags} from '../../lib/cli/flags.js'
import {recordRun} from '../../lib/ledger/record.js'
import type {RunTally} from '../../lib/ledger/record.js'

export default class DlqRecover extends BqCommand {
  static override summary = 'Return messages a crashed redrive left in staging to the dead-letter queue.'
  static override description = `A redrive that was killed mid-run can leave the messages it had taken in a staging place on the broker (where the broker keeps one: a staging list, rows reserved by a dead process). The next redrive recovers them by itself; this command does it now. Brokers that return reserved messages themselves have nothing to recover, and say 0.`
  static override examples = ['<%= config.bin %> dlq recover orders', '<%= config.bin %> dlq recover orders -b "$STAGING_BROKER"']
  static override args = {queue: Args.string({description: 'the queue whose DLQ to recover (or the DLQ itself)', required: true})}
  static override flags = {
    dlq: Flags.string({description: 'recover this dead-letter queue instead of <queue>.dlq'}),
    reason: sharedFlags.reason,
    broker: sharedFlags.broker,
    context: sharedFlags.context,
    timeout: sharedFlags.timeout,
  }

  async run(): Promise<{dlq: string; broker: string; recovered: number; run_id?: string}> {
    const {args, flags} = await this.parse(DlqRecover)
    const dlq = dlqName(args.queue, flags.dlq)
    const json = this.jsonEnabled()
    return withBroker(flags.broker, (adapter) => {
      const info = {command: 'dlq recover', broker: adapter.displayUrl, target: dlq, selection: {}, reason: flags.reason}
      const tally = (result: unknown): RunTally => ({counts: {recovered: (result as {recovered?: number}).recovered ?? 0}})
      return recordRun(info, async (run) => {
        const recovered = await adapter.recover(dlq)
        if (!json) this.log(`${recovered} message${recovered === 1 ? '' : 's'} returned to ${dlq} on ${adapter.displayUrl}`)
        return {dlq, broker: adapter.displayUrl, recovered, ...(run.recorded ? {run_id: run.id} : {})}
      }, {warn: (text) => this.warn(text), tally, log: json ? undefined : (line) => this.logToStderr(line)})
    }, {timeoutSeconds: flags.timeout, warn: (message) => this.warn(message)})
  }
}
