import {Args, Flags} from '@oclif/core'

import {BqCommand} from '../lib/cli/base-command.js'
import {REFUSED_EXIT} from '../lib/cli/exit-help.js'
import {withTargetBroker} from '../lib/cli/broker.js'
import {selectionFlags, selectionRecord, sharedFlags} from '../lib/cli/flags.js'
import {confirmChange} from '../lib/cli/guardrails.js'
import {bypassWarning, moveTally, noteMoved, runMoves} from '../lib/cli/move-run.js'
import {recordRun} from '../lib/ledger/record.js'
import type {MoveResult} from '../lib/cli/move-run.js'
import {requireReadableFile} from '../lib/cli/bounded-file.js'
import {BqError, ExitCode, NotConfirmedError} from '../lib/errors.js'
import {selectorsFromFlags} from '../lib/ops/match.js'
import {nothingReplayable, replay} from '../lib/ops/replay.js'

export default class Replay extends BqCommand {
  static override summary = 'Re-publish envelopes from a JSON or JSONL file (for example a peek --jsonl export).'
  static override description = `Non-destructive: the file is only read. By default dead-lettered envelopes are reset as in redrive (dead_letter removed, attempts 0); --as-is copies the bytes verbatim (restoring a backup); --new-id mints fresh meta.ids and keeps each trace_id. Each message goes to --to, else its dead_letter.original_queue, else its meta.queue.

Lines of a header-keeping export (peek --jsonl --with-headers: {"envelope":{…},"headers":{…}}) are read as the envelope inside, and their headers are published with it: the export kept them on purpose, and a trace that silently lost its traceparent would be worse than one that kept it. --no-restore-headers drops them (for instance to keep a sandbox replay out of production traces). Other lines are envelopes, as peek --jsonl writes them.

Exit status: 0 when every selected message was published, 1 when nothing was because every message read was poison, 3 when some were not, 2 for usage errors, a file that cannot be read, or when not confirmed (nothing was changed), 4 when the broker cannot be reached, ${REFUSED_EXIT}, 130 when interrupted (Ctrl-C), 143 on SIGTERM, 129 on SIGHUP: each stops after the current batch and reports what was published.`
  static override examples = [
    '<%= config.bin %> replay export.jsonl --to orders.sandbox --bypass --yes',
    '<%= config.bin %> replay backup.jsonl --as-is --to orders -b "$STAGING_BROKER" --yes',
    '<%= config.bin %> peek orders.dlq --jsonl --with-headers --all | <%= config.bin %> replay - --to orders --yes',
    '<%= config.bin %> peek orders.dlq --jsonl | <%= config.bin %> replay - --new-id --select urn=urn:babel:orders:* --dry-run',
  ]
  static override args = {file: Args.string({description: 'JSON or JSONL file, or - for stdin', required: true})}
  static override flags = {
    to: Flags.string({description: 'publish every message to this queue'}),
    'to-broker': sharedFlags.toBroker,
    'as-is': Flags.boolean({description: 'copy bytes verbatim: no reset, no new id', exclusive: ['new-id']}),
    'new-id': Flags.boolean({description: 'mint a fresh meta.id for each message (trace_id is kept)'}),
    'restore-headers': Flags.boolean({description: 'publish the headers a --with-headers export line recorded with its message (default; --no-restore-headers drops them)', default: true, allowNo: true}),
    ...selectionFlags,
    max: sharedFlags.max,
    rate: sharedFlags.rate,
    bypass: sharedFlags.bypass,
    'dry-run': sharedFlags.dryRun,
    yes: sharedFlags.yes,
    list: Flags.boolean({description: 'print one line per message (dry runs always do)'}),
    reason: sharedFlags.reason,
    broker: sharedFlags.broker,
    context: sharedFlags.context,
    timeout: sharedFlags.timeout,
  }

  async run(): Promise<MoveResult> {
    const {args, flags} = await this.parse(Replay)
    if (args.file === '-' && !flags.yes && !flags['dry-run']) throw new NotConfirmedError('replaying from stdin needs --yes (stdin cannot also answer a confirmation): nothing was changed', 'confirmation-needed')
    // A file has no broker time: a dead-lettered envelope is timed by failed_at, any other by meta.created_at.
    const selectors = await selectorsFromFlags(flags, 'recorded')
    // A file that cannot be read is refused before a broker is opened or anything asked.
    requireReadableFile(args.file)
    const json = this.jsonEnabled()
    // Replay reads a file, not a broker: it opens only the broker it publishes to.
    return withTargetBroker(flags.broker, flags['to-broker'], async (target) => {
      const warning = bypassWarning(target, flags.bypass)
      if (warning) this.warn(warning)
      // From stdin --yes was required above; a protected context still needs its --max.
      if (!flags['dry-run']) {
        const where = flags.to ? `to ${flags.to}` : "to each envelope's own queue"
        const which = selectors.length > 0 ? `the envelopes in ${args.file} matching ${selectors.map((s) => s.text).join(' and ')}` : `the envelopes in ${args.file}`
        // Without --to there is no one queue to type: the context's name stands for it.
        const typed = flags.to ?? this.brokerContext?.name ?? ''
        await confirmChange(`Replay ${which}${flags.max > 0 ? ` (at most ${flags.max})` : ''} ${where} on ${target.displayUrl}?`, {yes: flags.yes, max: flags.max, typed, context: this.brokerContext})
      }
      const log = (line: string) => this.logToStderr(line)
      const selection = {...selectionRecord(flags), max: flags.max, to: flags.to ?? null, as_is: flags['as-is'], new_id: flags['new-id'], bypass: flags.bypass}
      const info = {command: 'replay', broker: target.displayUrl, source: args.file, target: flags.to, selection, reason: flags.reason, dryRun: flags['dry-run']}
      return recordRun(info, async (run) => {
        const result = await runMoves({json, list: flags.list || flags['dry-run'], dryRun: flags['dry-run'], verb: 'published', log, onItem: noteMoved(run, 'published')}, (hooks) =>
          replay({
            file: args.file, target, toQueue: flags.to, selectors, max: flags.max, rate: flags.rate, bypass: flags.bypass,
            dryRun: flags['dry-run'], asIs: flags['as-is'], newId: flags['new-id'], restoreHeaders: flags['restore-headers'],
            runId: run.recorded ? run.id : undefined, warn: (message) => this.warn(message), ...hooks,
          }),
        )
        const reported = run.recorded ? {...result, run_id: run.id} : result
        const nothing = nothingReplayable(result)
        if (nothing !== undefined) throw new BqError(nothing, {exitCode: ExitCode.failure, code: 'invalid-input', result: reported})
        return reported
      }, {warn: (text) => this.warn(text), tally: moveTally, log: json ? undefined : log})
    }, {timeoutSeconds: flags.timeout, warn: (message) => this.warn(message)})
  }
}
