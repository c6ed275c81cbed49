import {Args, Flags} from '@oclif/core'

import {BqCommand} from '../../lib/cli/base-command.js'
import {REFUSED_EXIT} from '../../lib/cli/exit-help.js'
import {requireReceiveConsent, withBrokers} from '../../lib/cli/broker.js'
import {redriveQuestion} from '../../lib/cli/confirm.js'
import {dlqName} from '../../lib/cli/dlq-name.js'
import {warnIfMissing} from '../../lib/cli/missing-queue.js'
import {selectionFlags, selectionRecord, sharedFlags} from '../../lib/cli/flags.js'
import {confirmChange} from '../../lib/cli/guardrails.js'
import {bypassWarning, moveTally, moveTallyAs, noteMoved, runMoves} from '../../lib/cli/move-run.js'
import {recordRun} from '../../lib/ledger/record.js'
import type {MoveResult} from '../../lib/cli/move-run.js'
import {selectorsFromFlags} from '../../lib/ops/match.js'
import {checkDeliveryCost, redrive} from '../../lib/ops/redrive.js'
import {readPatchFile} from '../../lib/cli/patch-file.js'
import {renamedRun, withRenamedRun} from '../../lib/output/renamed-run.js'
import {recoverCommand} from '../../lib/output/shell-word.js'

const COPY_NAMES = {done: 'copied', would: 'would_copy'}
const COPY_LABELS = {redriven: 'copied', would_redrive: 'would copy'}

export default class DlqRedrive extends BqCommand {
  static override summary = 'Move dead-lettered messages back to their queues (or to a sandbox), reset for reprocessing.'
  static override description = `Each message from <queue>.dlq (or --dlq) is republished to its dead_letter.original_queue (else meta.queue), or to --to, with dead_letter removed and attempts set to 0; every other byte is kept. A message leaves the DLQ only after the target confirmed its copy. Unselected and poison messages stay where they are.

--copy publishes the same reset copies and leaves every original on the DLQ: where the broker has a true peek the DLQ is browsed (nothing is taken); elsewhere every message is taken and handed back (on a queue that counts deliveries, with --accept-delivery-cost). The report counts copied instead of redriven.

On a queue that counts deliveries toward a delivery limit (docs/redrive-guarantees.md says which, per broker), a dry run that would read by receiving is refused, and a redrive needs --accept-delivery-cost: what it leaves behind (unselected, poison, unmovable) costs one delivery each.

Exit status: 0 when every selected message moved, 3 when some did not, 2 for usage errors or when not confirmed (nothing was changed), 4 when a broker cannot be reached or is lost (the report says what moved), ${REFUSED_EXIT}, 130 when interrupted (Ctrl-C), 143 on SIGTERM, 129 on SIGHUP: each stops after the current batch and reports what moved.`
  static override aliases = ['redrive']
  static override examples = [
    '<%= config.bin %> dlq redrive orders --dry-run',
    '<%= config.bin %> dlq redrive orders --select reason=failed --select "exception~Timeout" --yes',
    '<%= config.bin %> dlq redrive orders --where \'data.customer_id == 9007199254740993\' --since 2026-11-30T08:00:00Z --until 30m --dry-run',
    '<%= config.bin %> dlq redrive orders --to orders.sandbox --bypass --max 100 --rate 50 --yes',
    '<%= config.bin %> dlq redrive orders -b "$OLD_BROKER" --to-broker "$NEW_BROKER" --yes',
    '<%= config.bin %> dlq redrive orders --patch fix-amount.json --dry-run',
    '<%= config.bin %> dlq redrive orders --copy --to orders.sandbox --yes',
  ]
  static override args = {queue: Args.string({description: 'the queue whose DLQ to redrive (or the DLQ itself)', required: true})}
  static override flags = {
    dlq: Flags.string({description: 'redrive from this dead-letter queue instead of <queue>.dlq'}),
    to: Flags.string({description: 'send every message to this queue (sandbox routing) instead of its original queue'}),
    'to-broker': sharedFlags.toBroker,
    ...selectionFlags,
    max: sharedFlags.max,
    rate: sharedFlags.rate,
    bypass: sharedFlags.bypass,
    'dry-run': sharedFlags.dryRun,
    yes: sharedFlags.yes,
    patch: Flags.string({description: 'apply this JSON Patch (RFC 6902) file to every selected message before the reset: writes to /data and /meta/... only; a message it fails on stays on the DLQ, reported failed'}),
    list: Flags.boolean({description: 'print one line per message (dry runs always do)'}),
    receive: sharedFlags.receive,
    reason: sharedFlags.reason,
    copy: Flags.boolean({description: 'publish the reset copies and leave every original on the DLQ (read by browsing where the broker has a true peek)'}),
    'accept-delivery-cost': Flags.boolean({description: 'on a queue that counts deliveries toward a limit, accept that each message the redrive leaves behind costs one delivery'}),
    broker: sharedFlags.broker,
    context: sharedFlags.context,
    timeout: sharedFlags.timeout,
  }

  async run(): Promise<MoveResult | Record<string, unknown>> {
    const {args, flags} = await this.parse(DlqRedrive)
    const dlq = dlqName(args.queue, flags.dlq)
    // A DLQ's messages are timed by when they failed (dead_letter.failed_at).
    const selectors = await selectorsFromFlags(flags, 'failed_at')
    const json = this.jsonEnabled()
    // Read and checked before the broker is opened: a bad patch is a usage error that changes nothing.
    const transform = flags.patch === undefined ? undefined : readPatchFile(flags.patch)
    return withBrokers(flags.broker, flags['to-broker'], async (source, target) => {
      if (flags['dry-run']) requireReceiveConsent(source, flags.receive, 'a dry run')
      const warning = bypassWarning(target, flags.bypass)
      if (warning) this.warn(warning)
      // Refused before anything is read, and before the operator is asked.
      const acceptDeliveryCost = flags['accept-delivery-cost']
      await checkDeliveryCost({source, dlq, dryRun: flags['dry-run'], selectors, max: flags.max, acceptDeliveryCost, copy: flags.copy})
      await warnIfMissing(source, dlq, (text) => this.warn(text))
      // The DLQ's depth: for the question, and the progress line's total (only asked for when shown).
      const depth = !flags['dry-run'] || (!json && process.stderr.isTTY) ? await source.count(dlq) : undefined
      if (!flags['dry-run'] && depth !== undefined) {
        const patched = flags.patch === undefined ? '' : `, each patched with ${flags.patch},`
        const where = `${patched} ${flags.to ? `to ${flags.to}` : 'to their original queues'}`.trim()
        const onto = target === source ? '' : ` on ${target.displayUrl}`
        const question = redriveQuestion({dlq, from: source.displayUrl, depth, max: flags.max, selectors, destination: `${where}${onto}`, copy: flags.copy})
        if (depth > 0) await confirmChange(question, {yes: flags.yes, max: flags.max, typed: dlq, context: this.brokerContext})
      }
      const total = depth === undefined ? undefined : flags.max > 0 && selectors.length === 0 ? Math.min(depth, flags.max) : depth
      const copy = flags.copy
      const log = (line: string) => this.logToStderr(line)
      const selection = {...selectionRecord(flags), ...(flags.patch === undefined ? {} : {patch: flags.patch}), ...(copy ? {copy: true} : {}), max: flags.max, to: flags.to ?? null, bypass: flags.bypass}
      const info = {command: 'dlq redrive', broker: source.displayUrl, targetBroker: target === source ? undefined : target.displayUrl, source: dlq, target: flags.to, selection, reason: flags.reason, dryRun: flags['dry-run']}
      const run = () => recordRun(info, async (ledger) => {
        const moves = {json, list: flags.list || flags['dry-run'], dryRun: flags['dry-run'], verb: copy ? 'copied' : 'moved', log, total, labels: copy ? COPY_LABELS : undefined, onItem: noteMoved(ledger, copy ? 'copied' : undefined), recover: recoverCommand(args.queue, flags.dlq)}
        const result = await runMoves(moves, (hooks) =>
          redrive({source, target, dlq, toQueue: flags.to, selectors, max: flags.max, rate: flags.rate, bypass: flags.bypass, dryRun: flags['dry-run'], acceptDeliveryCost, transform, copy, runId: ledger.recorded ? ledger.id : undefined, ...hooks}),
        )
        return ledger.recorded ? {...result, run_id: ledger.id} : result
      }, {warn: (text) => this.warn(text), tally: copy ? moveTallyAs(COPY_NAMES) : moveTally, log: json ? undefined : log})
      if (!copy) return run()
      // A copy's report says copied, not moved.
      const named = (result: MoveResult) => renamedRun(result, COPY_NAMES)
      return withRenamedRun(async () => named(await run()), named)
    }, {timeoutSeconds: flags.timeout, warn: (message) => this.warn(message)})
  }
}
