import {existsSync} from 'node:fs'

import {Args, Flags} from '@oclif/core'

import {BqCommand} from '../../lib/cli/base-command.js'
import {REFUSED_EXIT} from '../../lib/cli/exit-help.js'
import {requireReceiveConsent, withBroker} from '../../lib/cli/broker.js'
import {purgeQuestion} from '../../lib/cli/confirm.js'
import {dlqName} from '../../lib/cli/dlq-name.js'
import {selectionFlags, selectionRecord, sharedFlags} from '../../lib/cli/flags.js'
import {confirmChange} from '../../lib/cli/guardrails.js'
import {moveTallyAs, noteMoved, runMoves} from '../../lib/cli/move-run.js'
import {recoverCommand, shellLine} from '../../lib/output/shell-word.js'
import type {MoveResult} from '../../lib/cli/move-run.js'
import {recordRun} from '../../lib/ledger/record.js'
import {selectorsFromFlags} from '../../lib/ops/match.js'
import {purge} from '../../lib/ops/purge.js'
import {PurgeBackup, backupExists, defaultBackupPath} from '../../lib/ops/purge-backup.js'
import {checkDeliveryCost} from '../../lib/ops/redrive.js'
import {renamedRun, withRenamedRun} from '../../lib/output/renamed-run.js'

const NAMES = {done: 'purged', would: 'would_purge'}

export default class DlqPurge extends BqCommand {
  static override summary = 'Delete dead-lettered messages, after writing them to a backup file that bq replay restores.'
  static override description = `Each selected message of <queue>.dlq (or --dlq) is first appended to a JSONL backup (the export lines of peek --jsonl --with-headers), which is flushed to disk (fsync) before any message of its batch is deleted: a purge stopped or killed at any moment has deleted nothing that is not in the backup. The backup goes to --backup FILE, else ./<dlq>.purge-<UTC time>.jsonl; an existing file is never overwritten. bq replay FILE --as-is --to <dlq> restores every message byte for byte, with its headers (and on every broker but Redis and the embedded store its native properties: docs/restore-fidelity.md). --no-backup deletes without one, and must be said.

Left in place: unselected messages, poison (bodies that are not envelopes: no backup line could restore them exactly), and envelopes a backup line would not restore byte for byte (whitespace outside JSON tokens, or larger than the 16 MiB bq replay reads) — those count as failed.

On a queue that counts deliveries toward a delivery limit, a dry run that would read by receiving is refused, and a purge that leaves messages behind needs --accept-delivery-cost, as for dlq redrive.

Exit status: 0 when every selected message was deleted, 3 when some were not, 2 for usage errors, an existing backup file, or when not confirmed (nothing was changed), 4 when the broker cannot be reached or is lost, ${REFUSED_EXIT}, 130/143/129 on SIGINT/SIGTERM/SIGHUP (stops after the current batch).`
  static override examples = [
    '<%= config.bin %> dlq purge orders --dry-run',
    '<%= config.bin %> dlq purge orders --select reason=unknown_urn --yes',
    '<%= config.bin %> dlq purge orders --backup /var/backups/orders-dlq.jsonl --max 1000 --yes',
    '<%= config.bin %> replay ./orders.dlq.purge-20250605T141210-000Z.jsonl --as-is --to orders.dlq --yes',
  ]
  static override args = {queue: Args.string({description: 'the queue whose DLQ to purge (or the DLQ itself)', required: true})}
  static override flags = {
    dlq: Flags.string({description: 'purge this dead-letter queue instead of <queue>.dlq'}),
    ...selectionFlags,
    max: sharedFlags.max,
    backup: Flags.string({description: 'write the backup here (default ./<dlq>.purge-<UTC time>.jsonl); the file must not exist'}),
    'no-backup': Flags.boolean({description: 'delete without writing a backup first (the messages are gone for good)', exclusive: ['backup']}),
    'dry-run': sharedFlags.dryRun,
    yes: sharedFlags.yes,
    list: Flags.boolean({description: 'print one line per message (dry runs always do)'}),
    receive: sharedFlags.receive,
    'accept-delivery-cost': Flags.boolean({description: 'on a queue that counts deliveries toward a limit, accept that each message the purge leaves behind costs one delivery'}),
    reason: sharedFlags.reason,
    broker: sharedFlags.broker,
    context: sharedFlags.context,
    timeout: sharedFlags.timeout,
  }

  async run(): Promise<Record<string, unknown>> {
    const {args, flags} = await this.parse(DlqPurge)
    const dlq = dlqName(args.queue, flags.dlq)
    const selectors = await selectorsFromFlags(flags, 'failed_at')
    const json = this.jsonEnabled()
    const dryRun = flags['dry-run']
    const backupPath = flags['no-backup'] ? undefined : (flags.backup ?? defaultBackupPath(dlq))
    return withBroker(flags.broker, async (source) => {
      if (dryRun) requireReceiveConsent(source, flags.receive, 'a dry run')
      const acceptDeliveryCost = flags['accept-delivery-cost']
      await checkDeliveryCost({source, dlq, dryRun, selectors, max: flags.max, acceptDeliveryCost}, 'purge')
      const depth = !dryRun || (!json && process.stderr.isTTY) ? await source.count(dlq) : undefined
      // Refused before the operator is asked (the exclusive create below still guards a race).
      if (!dryRun && backupPath !== undefined && existsSync(backupPath)) throw backupExists(backupPath)
      if (!dryRun && depth !== undefined && depth > 0) {
        const question = purgeQuestion({dlq, from: source.displayUrl, depth, max: flags.max, selectors, backup: backupPath})
        await confirmChange(question, {yes: flags.yes, max: flags.max, typed: dlq, context: this.brokerContext})
      }
      // Created (exclusively) before anything is read: an existing file is refused with nothing changed.
      const backup = dryRun || backupPath === undefined ? undefined : PurgeBackup.create(backupPath)
      if (backup) this.logToStderr(`backup: ${backup.path} (restore with: ${shellLine(['bq', 'replay', backup.path, '--as-is', '--to', dlq])})`)
      const total = depth === undefined ? undefined : flags.max > 0 && selectors.length === 0 ? Math.min(depth, flags.max) : depth
      const report = (result: MoveResult) => {
        // A purge has no target queue: the backup is where its messages went.
        const {target: _target, items, ...named} = renamedRun(result, NAMES)
        const untargeted = (items as Array<Record<string, unknown>>).map(({target: _none, ...item}) => item)
        return {...named, items: untargeted, backup: backup === undefined ? null : {path: backup.path, messages: backup.lines}}
      }
      const log = (line: string) => this.logToStderr(line)
      const info = {command: 'dlq purge', broker: source.displayUrl, source: dlq, target: backup?.path, selection: {...selectionRecord(flags), max: flags.max}, reason: flags.reason, dryRun}
      try {
        return await withRenamedRun(async () => report(await recordRun(info, async (ledger) => {
          const result = await runMoves(
            {json, list: flags.list || dryRun, dryRun, verb: 'purged', log, total, labels: {redriven: 'purged', would_redrive: 'would purge'}, onItem: noteMoved(ledger, 'deleted'), recover: recoverCommand(args.queue, flags.dlq)},
            (hooks) => purge({source, dlq, selectors, max: flags.max, dryRun, backup, acceptDeliveryCost, ...hooks}),
          )
          return ledger.recorded ? {...result, run_id: ledger.id} : result
        }, {warn: (text) => this.warn(text), tally: moveTallyAs(NAMES), log: json ? undefined : log})), report)
      } finally {
        backup?.close()
      }
    }, {timeoutSeconds: flags.timeout, warn: (message) => this.warn(message)})
  }
}
