import {existsSync} from 'node:fs'

import {Args, Flags} from '@oclif/core'

import {BqCommand} from '../../lib/cli/base-command.js'
import {REFUSED_EXIT} from '../../lib/cli/exit-help.js'
import {requireReceiveConsent, withBroker} from '../../lib/cli/broker.js'
import {dlqName} from '../../lib/cli/dlq-name.js'
import {sharedFlags} from '../../lib/cli/flags.js'
import {runBqChild} from '../../lib/cli/run-child.js'
import {commandArgv, commandLine, peekFilterArgs, selectArgs} from '../../lib/cli/triage-argv.js'
import type {TriageScope, TriageTarget} from '../../lib/cli/triage-argv.js'
import type {BrokerAdapter} from '../../lib/brokers/adapter.js'
import {InterruptedError, UsageError} from '../../lib/errors.js'
import {browseQueue} from '../../lib/ops/browse.js'
import {inspectDlq} from '../../lib/ops/inspect.js'
import type {TriageGroup} from '../../lib/ops/inspect.js'
import {selectorsFromFlags} from '../../lib/ops/match.js'
import type {MessageView} from '../../lib/ops/message-view.js'
import {isoTime} from '../../lib/output/table.js'

const PAGE = 10
const NOT_INTERACTIVE = 'bq dlq triage is interactive (a terminal, no --json): use bq dlq inspect, then bq dlq redrive / dlq purge / dlq edit with --select, or bq peek --jsonl (see bq dlq triage --help)'

type Action = 'redrive' | 'sandbox' | 'copy' | 'purge' | 'export' | 'edit'

/** One action as the existing commands do it: what to run, whether it has a dry run, where its output goes. */
interface ActionPlan {
  command: string[]
  rest: string[]
  preview: boolean
  /** Asks its own confirmation on a terminal and takes --yes off one (the printed runbook line carries it); otherwise triage asks before running it. */
  takesYes: boolean
  stdoutFile?: string
}

export default class DlqTriage extends BqCommand {
  static override summary = 'Triage a dead-letter queue interactively: pick a group, page through it, act on it.'
  static override description = `On a terminal only. Shows the groups of <queue>.dlq (or --dlq) by reason and URN, as dlq inspect counts them; pick one, page through its messages, and act on the whole group or one message: redrive, redrive to a sandbox queue, copy (redrive --copy), purge with a backup (dlq purge), export (peek --jsonl --with-headers into a file), or edit and resubmit (dlq edit).

Every action runs the existing command (so its confirmation, delivery-cost checks and run ledger apply): a dry run first where the command has one, then the equivalent non-interactive command line (for a runbook), then the command itself, which asks before changing anything.

Exit status: 0 when the operator quits (or the DLQ is empty), 2 off a terminal or with --json, 4 when the broker cannot be reached, ${REFUSED_EXIT}, 130 on Ctrl-C at a triage prompt.`
  static override examples = ['<%= config.bin %> dlq triage orders', '<%= config.bin %> dlq triage orders --broker redis://127.0.0.1:6379']
  static override args = {queue: Args.string({description: 'the queue whose DLQ to triage (or the DLQ itself)', required: true})}
  static override flags = {
    dlq: Flags.string({description: 'triage this dead-letter queue instead of <queue>.dlq'}),
    scan: Flags.integer({description: 'look at no more than this many messages per listing', default: 100_000, min: 1}),
    receive: sharedFlags.receive,
    broker: sharedFlags.broker,
    context: sharedFlags.context,
    timeout: sharedFlags.timeout,
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(DlqTriage)
    if (this.jsonEnabled() || !process.stdin.isTTY || !process.stdout.isTTY) throw new UsageError(NOT_INTERACTIVE)
    const dlq = dlqName(args.queue, flags.dlq)
    await withBroker(flags.broker, async (adapter) => {
      requireReceiveConsent(adapter, flags.receive, 'triage')
      const context = this.brokerContext?.name
      const scope: TriageScope = {queue: args.queue, dlq: flags.dlq, context, broker: context === undefined ? flags.broker : undefined, brokerShown: adapter.displayUrl, receive: flags.receive}
      const session = new TriageSession(this, adapter, dlq, scope, flags.scan)
      await session.loop()
    }, {timeoutSeconds: flags.timeout, warn: (message) => this.warn(message)})
  }

  say(line: string): void {
    this.log(line)
  }
}

class TriageSession {
  constructor(
    private readonly command: DlqTriage,
    private readonly adapter: BrokerAdapter,
    private readonly dlq: string,
    private readonly scope: TriageScope,
    private readonly scan: number,
  ) {}

  async loop(): Promise<void> {
    for (;;) {
      const report = await inspectDlq(this.adapter, {dlq: this.dlq, groupBy: ['reason', 'urn'], scanLimit: this.scan})
      if (report.groups.length === 0) {
        this.command.say(`${this.dlq} on ${report.broker} is empty: nothing to triage`)
        return
      }
      this.command.say(`${this.dlq} on ${report.broker}: ${report.depth} waiting, ${report.groups.length} group(s) by reason and URN${report.truncated ? ` (first ${this.scan} examined)` : ''}`)
      const choices = report.groups.map((group, index) => ({name: groupLabel(group), value: String(index)}))
      const picked = await ask<string>({type: 'select', message: 'Pick a group', choices: [...choices, {name: 'quit', value: 'quit'}], pageSize: 15})
      if (picked === 'quit') return
      const group = report.groups[Number(picked)]
      const reason = group.key.reason
      const urn = group.key.urn
      if (group.poison || reason === null || urn === null || reason === undefined || urn === undefined) {
        this.command.say('this group has no reason or URN to select it by: see bq dlq purge --help and bq peek --help')
        continue
      }
      await this.browseGroup({kind: 'group', reason, urn}, group.count)
    }
  }

  /** Pages through a group's messages; returns after an action (the counts changed) or "back". */
  private async browseGroup(target: TriageTarget & {kind: 'group'}, count: number): Promise<void> {
    const selectors = await selectorsFromFlags({select: selectArgs(target).filter((arg) => arg !== '--select')}, 'failed_at')
    let page = 0
    for (;;) {
      const views: MessageView[] = []
      const outcome = await browseQueue(this.adapter, {queue: this.dlq, limit: (page + 1) * PAGE, scanLimit: this.scan, selectors}, (view) => {
        views.push(view)
      })
      const shown = views.slice(page * PAGE)
      const more = views.length === (page + 1) * PAGE && !outcome.truncated
      const choices = [
        {name: `act on the whole group (${count} message(s))`, value: 'group'},
        ...shown.map((view, index) => ({name: messageLabel(view), value: `message:${index}`})),
        ...(more ? [{name: 'next page', value: 'next'}] : []),
        ...(page > 0 ? [{name: 'previous page', value: 'previous'}] : []),
        {name: 'back to the groups', value: 'back'},
      ]
      const picked = await ask<string>({type: 'select', message: `${target.reason} / ${target.urn}: page ${page + 1}`, choices, pageSize: PAGE + 5})
      if (picked === 'back') return
      if (picked === 'next') page++
      else if (picked === 'previous') page--
      else if (picked === 'group') return this.act(target)
      else {
        const view = shown[Number(picked.slice('message:'.length))]
        if (view.id === undefined) this.command.say('this message has no meta.id to select it by')
        else return this.act({kind: 'message', id: view.id})
      }
    }
  }

  private async act(target: TriageTarget): Promise<void> {
    const one = target.kind === 'message'
    const choices: Array<{name: string; value: Action | 'back'}> = [
      {name: 'redrive to the original queue', value: 'redrive'},
      {name: 'redrive to a sandbox queue', value: 'sandbox'},
      {name: 'copy (redrive --copy, the originals stay)', value: 'copy'},
      {name: 'purge, with a backup file', value: 'purge'},
      {name: 'export to a JSONL file (with headers)', value: 'export'},
      ...(one ? [{name: 'edit the data and resubmit', value: 'edit' as const}] : []),
      {name: 'back', value: 'back'},
    ]
    const action = await ask<Action | 'back'>({type: 'select', message: one ? `Act on message ${target.id}` : 'Act on the whole group', choices})
    if (action === 'back') return
    const plan = await planAction(action, target, this.scope, this.dlq)
    await this.execute(plan)
  }

  /** Dry run, runbook line, then the command itself (which asks before changing anything). */
  private async execute(plan: ActionPlan): Promise<void> {
    const root = this.command.config.root
    if (plan.preview) {
      this.command.say('preview (dry run):')
      const code = await runBqChild(root, commandArgv(plan.command, this.scope, [...plan.rest, '--dry-run'], false))
      if (code !== 0) {
        this.command.say(`the dry run ended with exit ${code}: nothing was run`)
        return
      }
    }
    const printed = commandArgv(plan.command, this.scope, plan.takesYes ? [...plan.rest, '--yes'] : plan.rest, true)
    this.command.say(`equivalent command: ${commandLine(printed, plan.stdoutFile)}`)
    if (!plan.takesYes && !(await ask<boolean>({type: 'confirm', message: 'Run it?', default: false}))) return
    const code = await runBqChild(root, commandArgv(plan.command, this.scope, plan.rest, false), {stdoutFile: plan.stdoutFile})
    this.command.say(code === 0 ? 'done' : `the command ended with exit ${code}`)
  }
}

async function planAction(action: Action, target: TriageTarget, scope: TriageScope, dlq: string): Promise<ActionPlan> {
  const select = selectArgs(target)
  switch (action) {
    case 'redrive': return {command: ['dlq', 'redrive', scope.queue], rest: select, preview: true, takesYes: true}
    case 'sandbox': {
      const to = await askName('Sandbox queue name')
      return {command: ['dlq', 'redrive', scope.queue], rest: ['--to', to, ...select], preview: true, takesYes: true}
    }
    case 'copy': {
      const to = (await ask<string>({type: 'input', message: 'Copy to which queue? (empty: each message\'s original queue)'})).trim()
      return {command: ['dlq', 'redrive', scope.queue], rest: ['--copy', ...(to === '' ? [] : ['--to', to]), ...select], preview: true, takesYes: true}
    }
    case 'purge': return {command: ['dlq', 'purge', scope.queue], rest: select, preview: true, takesYes: true}
    case 'export': {
      let file = await askName('Export to file', `${dlq}.triage-${new Date().toISOString().replace(/[:.]/g, '-')}.jsonl`)
      // An export never overwrites a file.
      while (existsSync(file)) file = await askName(`${file} exists; export to another file`)
      return {command: ['peek', dlq], rest: ['--all', '--jsonl', '--with-headers', ...peekFilterArgs(target)], preview: false, takesYes: false, stdoutFile: file}
    }
    case 'edit': {
      if (target.kind !== 'message') throw new UsageError('edit acts on one message')
      return {command: ['dlq', 'edit', scope.queue], rest: ['--id', target.id], preview: false, takesYes: true}
    }
  }
}

async function askName(message: string, fallback?: string): Promise<string> {
  for (;;) {
    const answer = (await ask<string>({type: 'input', message, default: fallback})).trim()
    if (answer !== '') return answer
  }
}

/** One inquirer question; Ctrl-C at it ends the session (exit 130), nothing having been changed by it. */
async function ask<T>(question: Record<string, unknown>): Promise<T> {
  const {default: inquirer} = await import('inquirer')
  try {
    const answers = await inquirer.prompt<{value: T}>([{...question, name: 'value'} as never])
    return answers.value
  } catch (error) {
    if (error instanceof Error && error.name === 'ExitPromptError') throw new InterruptedError('triage interrupted')
    throw error
  }
}

function groupLabel(group: TriageGroup): string {
  if (group.poison) return `${String(group.count).padStart(6)}  poison (not an envelope)`
  return `${String(group.count).padStart(6)}  ${group.key.reason ?? '-'}  ${group.key.urn ?? '-'}  (newest ${group.newest_failed_at ?? '-'})`
}

function messageLabel(view: MessageView): string {
  const dead = view.deadLetter
  const error = dead?.error ?? view.decodeError ?? '-'
  return `${view.id ?? '-'}  ${dead?.exception ?? '-'}  ${error.length > 50 ? `${error.slice(0, 49)}…` : error}  ${isoTime(dead?.failedAt) ?? '-'}`
}
