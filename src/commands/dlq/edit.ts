import {Args, Flags} from '@oclif/core'

import {BqCommand} from '../../lib/cli/base-command.js'
import {REFUSED_EXIT} from '../../lib/cli/exit-help.js'
import {requireReceiveConsent, withBroker} from '../../lib/cli/broker.js'
import {dlqName} from '../../lib/cli/dlq-name.js'
import {editInEditor} from '../../lib/cli/editor.js'
import {sharedFlags} from '../../lib/cli/flags.js'
import {confirmChange} from '../../lib/cli/guardrails.js'
import {prettyData, withEditedData} from '../../lib/envelope/edit-data.js'
import {resetForRedrive} from '../../lib/envelope/envelope.js'
import type {Envelope} from '../../lib/envelope/envelope.js'
import {JsonSyntaxError, lineColumn} from '../../lib/envelope/json-tree.js'
import {BqError, ExitCode, UsageError} from '../../lib/errors.js'
import {checkDeliveryCost} from '../../lib/ops/redrive.js'
import {recordRun} from '../../lib/ledger/record.js'
import {findById, idSelector, resubmit} from '../../lib/ops/resubmit.js'
import type {SchemaRegistry} from '../../lib/schema/registry.js'

export interface EditResult {
  dlq: string
  id: string
  target: string
  dry_run: boolean
  /** The message as it is (or, in a dry run, would be) resubmitted: reset, edited data. */
  envelope: string
  resubmitted: boolean
}

export default class DlqEdit extends BqCommand {
  static override summary = "Edit a dead-lettered message's data in $EDITOR and resubmit it."
  static override description = `Finds the message whose meta.id is --id on <queue>.dlq (or --dlq) without taking it, opens its data (pretty-printed) in $VISUAL, else $EDITOR, else vi, and resubmits the edited message reset like a redrive (dead_letter removed, attempts 0) to its original queue, or --to. The edited copy is confirmed by the target before the original leaves the DLQ. Everything the edit did not change keeps its exact bytes.

Nothing changes when the file is left unchanged or emptied, the editor fails, the edited text is not JSON (the line and column are shown and the edit is kept), or the data does not match --registry.

Exit status: 0 resubmitted (or a dry run), 1 the data does not match the registry or the message is gone, 2 usage errors, invalid JSON, an aborted edit or no confirmation (nothing was changed), 3 the edited copy was not resubmitted (the original stays), 4 the broker cannot be reached, ${REFUSED_EXIT}.`
  static override examples = [
    '<%= config.bin %> dlq edit orders --id 5f0c7a1e-2b1d-4c3e-9f7a-1b2c3d4e5f60',
    'EDITOR="code --wait" <%= config.bin %> dlq edit orders --id 5f0c7a1e-2b1d-4c3e-9f7a-1b2c3d4e5f60 --registry registry.json --to orders.sandbox',
  ]
  static override args = {queue: Args.string({description: 'the queue whose DLQ holds the message (or the DLQ itself)', required: true})}
  static override flags = {
    id: Flags.string({description: 'the meta.id of the message to edit', required: true}),
    dlq: Flags.string({description: 'read this dead-letter queue instead of <queue>.dlq'}),
    to: Flags.string({description: 'resubmit to this queue instead of the original one'}),
    registry: sharedFlags.registry,
    'dry-run': sharedFlags.dryRun,
    yes: sharedFlags.yes,
    receive: sharedFlags.receive,
    'accept-delivery-cost': Flags.boolean({description: 'on a queue that counts deliveries toward a limit, accept that finding the message costs the others one delivery each'}),
    broker: sharedFlags.broker,
    context: sharedFlags.context,
    reason: sharedFlags.reason,
    timeout: sharedFlags.timeout,
  }

  async run(): Promise<EditResult> {
    const {args, flags} = await this.parse(DlqEdit)
    const dlq = dlqName(args.queue, flags.dlq)
    const id = flags.id
    if (id.trim() === '') throw new UsageError('--id is empty: give the meta.id of the message to edit (bq peek --dlq shows them); nothing was done')
    const registry: SchemaRegistry | undefined = flags.registry === undefined ? undefined : (await import('../../lib/schema/registry.js')).SchemaRegistry.load(flags.registry)
    return withBroker(flags.broker, async (source) => {
      requireReceiveConsent(source, flags.receive, 'finding the message')
      const acceptDeliveryCost = flags['accept-delivery-cost']
      // Refused before the editor opens: the operator's edit would have nowhere to go.
      if (!flags['dry-run']) await checkDeliveryCost({source, dlq, dryRun: false, selectors: [idSelector(id)], max: 0, acceptDeliveryCost})
      const view = await findById(source, dlq, id)
      if (view?.envelope === undefined) throw new BqError(`no message with meta.id ${id} on ${dlq} (${source.displayUrl}); nothing was changed`, {code: 'not-found'})
      const original = view.envelope
      const target = flags.to ?? view.deadLetter?.originalQueue ?? view.queue
      if (target === undefined) throw new UsageError(`message ${id} records no original queue: use --to; nothing was changed`)
      if (target === dlq) throw new UsageError(`--to ${target} is the dead-letter queue the message is on: choose another queue; nothing was changed`)
      const data = prettyData(original)
      if (data === undefined) throw new UsageError(`message ${id} has no data member to edit; nothing was changed`)

      const edit = editInEditor(data, `${id}.json`)
      if (edit.kind !== 'edited') throw new UsageError(`edit aborted: ${edit.detail}; nothing was changed`, 'edit-aborted')
      const edited = this.applyEdit(original, edit.text, edit.path)
      if (registry !== undefined) this.checkAgainstRegistry(registry, edited, edit.path)
      const envelope = resetForRedrive(edited).text
      const result: EditResult = {dlq, id, target, dry_run: flags['dry-run'], envelope, resubmitted: false}
      if (flags['dry-run']) {
        edit.discard()
        if (!this.jsonEnabled()) this.log(envelope)
        return result
      }
      try {
        await confirmChange(`Resubmit the edited message ${id} from ${dlq} on ${source.displayUrl} to ${target}?`, {yes: flags.yes, typed: dlq, context: this.brokerContext})
      } catch (error) {
        edit.discard()
        throw error
      }
      const info = {command: 'dlq edit', broker: source.displayUrl, source: dlq, target, selection: {id}, reason: flags.reason}
      const json = this.jsonEnabled()
      return recordRun(info, async (ledger) => {
        const outcome = await resubmit({source, dlq, id, original, edited, toQueue: flags.to, acceptDeliveryCost}).catch((error: unknown) => {
          this.warn(`your edit is kept in ${edit.path}`)
          throw error
        })
        for (const other of outcome.others) this.warn(`another message with meta.id ${id} stays on ${dlq}: ${other.error ?? other.outcome}`)
        if (outcome.item?.outcome !== 'redriven') {
          const why = outcome.item === undefined ? `it is no longer on ${dlq} (taken meanwhile?), so nothing was sent` : `${outcome.item.error ?? outcome.item.outcome}; the original stays on ${dlq}`
          throw new BqError(`message ${id} was not resubmitted: ${why}. Your edit is kept in ${edit.path}`, {code: outcome.item === undefined ? 'not-found' : 'partial', exitCode: outcome.item === undefined ? ExitCode.failure : ExitCode.partial, result: {...result, report: outcome.report}})
        }
        edit.discard()
        ledger.note('resubmitted', id)
        result.resubmitted = true
        if (!json) this.logToStderr(`resubmitted ${id} to ${target}; removed from ${dlq}`)
        return ledger.recorded ? {...result, run_id: ledger.id} : result
      }, {warn: (text) => this.warn(text), tally: () => ({counts: {resubmitted: 1}}), log: json ? undefined : (line) => this.logToStderr(line)})
    }, {timeoutSeconds: flags.timeout, warn: (message) => this.warn(message)})
  }

  /** The envelope with the edited data; invalid JSON is a usage error naming the line and column. */
  private applyEdit(original: Envelope, text: string, path: string): Envelope {
    try {
      return withEditedData(original, text)
    } catch (error) {
      if (!(error instanceof JsonSyntaxError)) throw error
      const {line, column} = lineColumn(text, error.offset)
      throw new UsageError(`the edited data is not valid JSON: ${error.message} at line ${line} column ${column}; nothing was changed. Your edit is kept in ${path}`, 'edit-invalid-json')
    }
  }

  /** Refuses data that its URN's schema rejects, or a URN the registry does not know, as publish does. */
  private checkAgainstRegistry(registry: SchemaRegistry, edited: Envelope, path: string): void {
    const urn = edited.urn ?? ''
    const data: unknown = JSON.parse(edited.raw('data') ?? 'null')
    const problems = registry.check(urn, data)
    const kept = `nothing was changed. Your edit is kept in ${path}`
    if (problems === undefined) throw new BqError(`no schema is registered for ${urn} in ${registry.path}; refusing to resubmit unchecked data; ${kept}`, {code: 'schema.unregistered'})
    const errors = problems.filter((problem) => problem.severity === 'error')
    if (errors.length > 0) throw new BqError(`the edited data does not match the schema for ${urn}: ${errors.map((p) => `${p.path} ${p.message}`).join('; ')}; ${kept}`, {code: 'schema.invalid'})
  }
}
