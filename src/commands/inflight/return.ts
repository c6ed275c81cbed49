import {Args, Flags} from '@oclif/core'

import {BqCommand} from '../../lib/cli/base-command.js'
import {REFUSED_EXIT} from '../../lib/cli/exit-help.js'
import {withBroker} from '../../lib/cli/broker.js'
import {inflightReturnQuestion} from '../../lib/cli/confirm.js'
import {parseDuration} from '../../lib/cli/duration.js'
import {selectionRecord, sharedFlags} from '../../lib/cli/flags.js'
import {confirmChange} from '../../lib/cli/guardrails.js'
import {moveTallyAs, noteMoved, runMoves} from '../../lib/cli/move-run.js'
import type {MoveResult} from '../../lib/cli/move-run.js'
import {recordRun} from '../../lib/ledger/record.js'
import {checkReturnable, returnInflight} from '../../lib/ops/inflight-return.js'
import {selectorsFromFlags} from '../../lib/ops/match.js'
import {renamedRun, withRenamedRun} from '../../lib/output/renamed-run.js'

const NAMES = {done: 'returned', would: 'would_return'}
const LABELS = {redriven: 'returned', would_redrive: 'would return'}
/** The gauges that count what a return may move. */
const TAKEN = new Set(['processing', 'reserved'])

export default class InflightReturn extends BqCommand {
  static override summary = 'Move work its consumers took and never finished back to the head of its queue (Redis, Laravel layout).'
  static override description = `On Redis, no SDK returns <queue>:processing by itself, and Laravel's :reserved set waits for a worker of that queue: bq moves such elements back to the head of the queue (LPUSH, the end the SDKs take from next), byte for byte, attempts as they are. Each element moves only while it is still where bq found it, in one script that removes exactly that element and pushes it only then: an element its consumer acknowledged meanwhile never comes back (reported acknowledged_meanwhile). A killed run leaves every element in one place or the other: run it again.

--older-than DURATION returns only elements created at least that long ago (meta.created_at: the processing list keeps no time of taking, so this is an upper bound of the time in flight) and Laravel reservations whose expiry has passed. Without it every element in flight is returned, including ones a live consumer is working on. Poison elements stay.

On brokers that return unfinished work themselves (RabbitMQ, SQS, Kafka, Artemis, Pulsar, Service Bus) bq says how, and moves nothing (exit 2, code unsupported).

Exit status: 0 when every selected element was returned (or acknowledged meanwhile), 3 when some could not be, 2 for usage errors, when not confirmed or when the broker returns work itself (nothing was changed), 4 when the broker cannot be reached or is lost (the report says what moved), ${REFUSED_EXIT}, 130/143/129 when interrupted (stops after the current page).`
  static override examples = [
    '<%= config.bin %> inflight return orders --older-than 10m --dry-run',
    '<%= config.bin %> inflight return orders --older-than 1h --yes',
    '<%= config.bin %> inflight return orders --select urn=urn:babel:orders:* --where \'attempts < 3\' --yes',
    '<%= config.bin %> inflight return default -b "redis://127.0.0.1:6379?prefix=queues:" --older-than 15m',
  ]
  static override args = {queue: Args.string({description: 'the queue whose in-flight work to return', required: true})}
  static override flags = {
    'older-than': Flags.string({description: 'only elements at least this old (90s, 10m, 2h): by meta.created_at, and Laravel reservations whose expiry has passed'}),
    select: sharedFlags.select,
    where: sharedFlags.where,
    'dry-run': sharedFlags.dryRun,
    yes: sharedFlags.yes,
    list: Flags.boolean({description: 'print one line per element (dry runs always do)'}),
    reason: sharedFlags.reason,
    broker: sharedFlags.broker,
    context: sharedFlags.context,
    timeout: sharedFlags.timeout,
  }

  async run(): Promise<Record<string, unknown>> {
    const {args, flags} = await this.parse(InflightReturn)
    const queue = args.queue
    // Checked before the broker is opened: a bad duration or selector changes nothing.
    const olderThanMs = flags['older-than'] === undefined ? undefined : parseDuration(flags['older-than'], '--older-than')
    const selectors = await selectorsFromFlags({select: flags.select, where: flags.where}, 'enqueued')
    const json = this.jsonEnabled()
    const dryRun = flags['dry-run']
    const named = (result: MoveResult) => ({...renamedRun(result, NAMES), queue, dlq: undefined})
    return withBroker(flags.broker, async (adapter) => {
      await checkReturnable(adapter, queue)
      const inflight = (await adapter.inflight!(queue, {limit: 0})).gauges.filter((g) => TAKEN.has(g.name)).reduce((sum, g) => sum + g.value, 0)
      if (!dryRun && inflight > 0) {
        const question = inflightReturnQuestion({queue, from: adapter.displayUrl, inflight, olderThan: flags['older-than'], selectors})
        await confirmChange(question, {yes: flags.yes, typed: queue, context: this.brokerContext})
      }
      const log = (line: string) => this.logToStderr(line)
      const selection = {...selectionRecord({select: flags.select, where: flags.where}), ...(flags['older-than'] === undefined ? {} : {older_than: flags['older-than']})}
      const info = {command: 'inflight return', broker: adapter.displayUrl, source: queue, target: queue, selection, reason: flags.reason, dryRun}
      return withRenamedRun(async () => {
        const result = await recordRun(info, async (ledger) => {
          const moved = await runMoves({json, list: flags.list || dryRun, dryRun, verb: 'returned', log, total: inflight, labels: LABELS, onItem: noteMoved(ledger, 'returned')}, (hooks) =>
            returnInflight({adapter, queue, selectors, olderThanMs, dryRun, ...hooks}),
          )
          const acknowledged = (moved as MoveResult & {acknowledged_meanwhile?: number}).acknowledged_meanwhile ?? 0
          if (!json && acknowledged > 0) log(`${acknowledged} acknowledged by their consumers meanwhile: not returned`)
          return ledger.recorded ? {...moved, run_id: ledger.id} : moved
        }, {warn: (text) => this.warn(text), tally: moveTallyAs(NAMES), log: json ? undefined : log})
        return named(result)
      }, named)
    }, {timeoutSeconds: flags.timeout, warn: (message) => this.warn(message)})
  }
}
