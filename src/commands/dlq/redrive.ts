import {Args, Flags} from '@oclif/core'
import type {Interfaces} from '@oclif/core'

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
import {canaryPlanOf, checkWatchCost, runCanary, stagePlan, stagePlanLines} from '../../lib/cli/canary-run.js'
import {holdAll} from '../../lib/ops/hold.js'
import type {CanaryPlan} from '../../lib/ops/canary.js'
import {redriveHolds} from '../../lib/cli/redrive-holds.js'
import type {RedriveHolds} from '../../lib/cli/redrive-holds.js'
import type {EnvelopeTransform} from '../../lib/ops/redrive-types.js'
import type {Selector} from '../../lib/ops/selector.js'
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

Exit status: 0 when every selected message moved, 3 when some did not, 2 for usage errors or when not confirmed (nothing was changed), 4 when a broker cannot be reached or is lost (the report says what moved), ${REFUSED_EXIT}, 130 when interrupted (Ctrl-C), 143 on SIGTERM, 129 on SIGHUP: each stops after the current batch and reports what moved.

--canary N moves in stages and watches the DLQ after each for the messages it moved coming back (docs/canary-redrive.md): exit 8 when a stage's returned share reaches --abort-at (the rest stay on the DLQ). --max-redrives K leaves messages this run ledger recorded as redriven K times or more on the DLQ (looping); --registry R --only-passing moves only messages whose data passes its URN's schema (the others are still_invalid).`
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
    canary: Flags.integer({description: 'move in stages: the first N selected, then watch the DLQ for --watch; stop when --abort-at of a stage came back, else move --ramp times as many (docs/canary-redrive.md)', min: 1, exclusive: ['copy'], helpGroup: 'CANARY'}),
    watch: Flags.string({description: 'with --canary: how long to watch the DLQ after each stage (default 60s)', dependsOn: ['canary'], helpGroup: 'CANARY'}),
    'abort-at': Flags.string({description: 'with --canary: stop when this share of a stage came back to the DLQ (default 5%)', dependsOn: ['canary'], helpGroup: 'CANARY'}),
    ramp: Flags.integer({description: 'with --canary: each stage moves this many times as many as the one before (default 4)', min: 1, dependsOn: ['canary'], helpGroup: 'CANARY'}),
    'max-redrives': Flags.integer({description: 'leave on the DLQ, reported looping, messages this run ledger recorded as redriven this many times or more', min: 1, helpGroup: 'GUARDS'}),
    registry: {...sharedFlags.registry, helpGroup: 'GUARDS'},
    'only-passing': Flags.boolean({description: 'with --registry: move only messages whose data passes its URN\'s schema; the others stay, reported still_invalid', dependsOn: ['registry'], helpGroup: 'GUARDS'}),
    broker: sharedFlags.broker,
    context: sharedFlags.context,
    timeout: sharedFlags.timeout,
  }

  async run(): Promise<object> {
    const {args, flags} = await this.parse(DlqRedrive)
    const dlq = dlqName(args.queue, flags.dlq)
    // A DLQ's messages are timed by when they failed (dead_letter.failed_at).
    const selectors = await selectorsFromFlags(flags, 'failed_at')
    const json = this.jsonEnabled()
    // Read and checked before the broker is opened: a bad patch is a usage error that changes nothing.
    const transform = flags.patch === undefined ? undefined : readPatchFile(flags.patch)
    const canary = canaryPlanOf(flags)
    const holds = await redriveHolds(flags, (text) => this.warn(text))
    try {
      return await this.redriveWith(args, flags, {dlq, selectors, json, transform, holds, canary})
    } finally {
      holds.close()
      const note = holds.note()
      if (note !== undefined) this.warn(note)
    }
  }

  private async redriveWith(args: {queue: string}, flags: Interfaces.InferredFlags<typeof DlqRedrive.flags>, context: {dlq: string; selectors: Selector[]; json: boolean; transform?: EnvelopeTransform; holds: RedriveHolds; canary?: CanaryPlan}): Promise<object> {
    const {dlq, selectors, json, transform, holds, canary} = context
    return withBrokers(flags.broker, flags['to-broker'], async (source, target) => {
      if (flags['dry-run']) requireReceiveConsent(source, flags.receive, 'a dry run')
      const warning = bypassWarning(target, flags.bypass)
      if (warning) this.warn(warning)
      // Refused before anything is read, and before the operator is asked.
      const acceptDeliveryCost = flags['accept-delivery-cost']
      if (canary !== undefined && !flags['dry-run']) await checkWatchCost(source, dlq, acceptDeliveryCost)
      // A canary's --max bounds what it moves, not what a stage reads.
      await checkDeliveryCost({source, dlq, dryRun: flags['dry-run'], selectors, max: canary === undefined ? flags.max : 0, acceptDeliveryCost, copy: flags.copy})
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
      const selection = {...selectionRecord(flags), ...(flags.patch === undefined ? {} : {patch: flags.patch}), ...(copy ? {copy: true} : {}), max: flags.max, to: flags.to ?? null, bypass: flags.bypass, ...guardRecord(flags, canary)}
      const info = {redrive: !copy, command: 'dlq redrive', broker: source.displayUrl, targetBroker: target === source ? undefined : target.displayUrl, source: dlq, target: flags.to, selection, reason: flags.reason, dryRun: flags['dry-run']}
      const run = () => recordRun<object>(info, async (ledger) => {
        const moves = {json, list: flags.list || flags['dry-run'], dryRun: flags['dry-run'], verb: copy ? 'copied' : 'moved', log, total, labels: copy ? COPY_LABELS : undefined, onItem: noteMoved(ledger, copy ? 'copied' : undefined), recover: recoverCommand(args.queue, flags.dlq)}
        const request = {source, target, dlq, toQueue: flags.to, selectors, max: flags.max, rate: flags.rate, bypass: flags.bypass, dryRun: flags['dry-run'], acceptDeliveryCost, transform, copy, hold: holds.hold, holdOutcomes: holds.outcomes, runId: ledger.recorded ? ledger.id : undefined}
        if (canary !== undefined && !flags['dry-run']) {
          return runCanary({plan: canary, source, target, dlq, json, log, ledger, runStage: (stage, limit, hold, onItem) =>
            runMoves({...moves, total: limit, log: (line) => log(`stage ${stage}: ${line}`), onItem: (item) => {
              moves.onItem(item)
              onItem(item)
            }}, (hooks) =>
              redrive({...request, max: 0, moveLimit: limit, hold: holdAll([hold, holds.hold]), holdOutcomes: [...holds.outcomes, 'returned'], ...hooks}),
            ),
          })
        }
        const result = await runMoves(moves, (hooks) => redrive({...request, ...hooks}))
        if (canary !== undefined) {
          // A canary's dry run: what would move, and the stages it would take.
          if (!json) for (const line of stagePlanLines(canary, result.counts.would_redrive)) log(line)
          return {...result, canary_plan: stagePlan(canary, result.counts.would_redrive)}
        }
        const before = holds.guard.redrivenBefore > 0 ? {redriven_before: holds.guard.redrivenBefore} : {}
        return ledger.recorded ? {...result, ...before, run_id: ledger.id} : {...result, ...before}
      }, {warn: (text) => this.warn(text), tally: copy ? moveTallyAs(COPY_NAMES) : moveTally, log: json ? undefined : log})
      if (!copy) return run()
      // A copy's report says copied, not moved.
      const named = (result: MoveResult) => renamedRun(result, COPY_NAMES)
      return withRenamedRun(async () => named((await run()) as MoveResult), named)
    }, {timeoutSeconds: flags.timeout, warn: (message) => this.warn(message)})
  }
}

/** The guards and the canary as the run ledger records them, when given. */
function guardRecord(flags: {'max-redrives'?: number; registry?: string; 'only-passing'?: boolean}, canary: CanaryPlan | undefined): Record<string, unknown> {
  return {
    ...(flags['max-redrives'] === undefined ? {} : {max_redrives: flags['max-redrives']}),
    ...(flags['only-passing'] ? {only_passing: flags.registry} : {}),
    ...(canary === undefined ? {} : {canary: {size: canary.size, watch_seconds: canary.watchMs / 1000, abort_at: canary.abortAt, ramp: canary.ramp}}),
  }
}
