import {Args, Flags} from '@oclif/core'

import {BqCommand} from '../../lib/cli/base-command.js'
import {requireReceiveConsent, withBrokers} from '../../lib/cli/broker.js'
import {confirmOrRequireYes} from '../../lib/cli/confirm.js'
import {dlqName} from '../../lib/cli/dlq-name.js'
import {sharedFlags} from '../../lib/cli/flags.js'
import {bypassWarning, runMoves} from '../../lib/cli/move-run.js'
import type {MoveResult} from '../../lib/cli/move-run.js'
import {parseSelector} from '../../lib/ops/match.js'
import {redrive} from '../../lib/ops/redrive.js'

export default class DlqRedrive extends BqCommand {
  static override summary = 'Move dead-lettered messages back to their queues (or to a sandbox), reset for reprocessing.'
  static override description = `Each message from <queue>.dlq (or --dlq) is republished to its dead_letter.original_queue (else meta.queue), or to --to, with dead_letter removed and attempts set to 0; every other byte is kept. A message leaves the DLQ only after the target confirmed its copy. Unselected and poison messages stay where they are.

Exit status: 0 when every selected message moved, 3 when some did not, 2 for usage errors or when not confirmed (nothing was changed), 4 when a broker cannot be reached, 130 when interrupted.`
  static override aliases = ['redrive']
  static override examples = [
    '<%= config.bin %> dlq redrive orders --dry-run',
    '<%= config.bin %> dlq redrive orders --select reason=failed --select "exception~Timeout" --yes',
    '<%= config.bin %> dlq redrive orders --to orders.sandbox --bypass --max 100 --rate 50 --yes',
    '<%= config.bin %> dlq redrive orders -b "$OLD_BROKER" --to-broker "$NEW_BROKER" --yes',
  ]
  static override args = {queue: Args.string({description: 'the queue whose DLQ to redrive (or the DLQ itself)', required: true})}
  static override flags = {
    dlq: Flags.string({description: 'redrive from this dead-letter queue instead of <queue>.dlq'}),
    to: Flags.string({description: 'send every message to this queue (sandbox routing) instead of its original queue'}),
    'to-broker': sharedFlags.toBroker,
    select: sharedFlags.select,
    max: sharedFlags.max,
    rate: sharedFlags.rate,
    bypass: sharedFlags.bypass,
    'dry-run': sharedFlags.dryRun,
    yes: sharedFlags.yes,
    list: Flags.boolean({description: 'print one line per message (dry runs always do)'}),
    receive: sharedFlags.receive,
    broker: sharedFlags.broker,
  }

  async run(): Promise<MoveResult> {
    const {args, flags} = await this.parse(DlqRedrive)
    const dlq = dlqName(args.queue, flags.dlq)
    const selectors = (flags.select ?? []).map(parseSelector)
    const json = this.jsonEnabled()
    return withBrokers(flags.broker, flags['to-broker'], async (source, target) => {
      if (flags['dry-run']) requireReceiveConsent(source, flags.receive, 'a dry run')
      const warning = bypassWarning(target, flags.bypass)
      if (warning) this.warn(warning)
      if (!flags['dry-run']) {
        const depth = await source.count(dlq)
        const where = flags.to ? `to ${flags.to}` : 'to their original queues'
        const onto = target === source ? '' : ` on ${target.displayUrl}`
        const question = `Redrive ${flags.max > 0 ? `up to ${flags.max} of ` : ''}${depth} message(s) from ${dlq} on ${source.displayUrl} ${where}${onto}?`
        if (depth > 0) await confirmOrRequireYes(question, flags.yes)
      }
      return runMoves({json, list: flags.list || flags['dry-run'], verb: 'moved', log: (line) => this.logToStderr(line)}, (hooks) =>
        redrive({source, target, dlq, toQueue: flags.to, selectors, max: flags.max, rate: flags.rate, bypass: flags.bypass, dryRun: flags['dry-run'], ...hooks}),
      )
    })
  }
}
