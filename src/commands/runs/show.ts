import {Args, Flags} from '@oclif/core'

import {BqCommand} from '../../lib/cli/base-command.js'
import {findRun} from '../../lib/ledger/read.js'
import type {RunRow} from '../../lib/ledger/store.js'

export default class RunsShow extends BqCommand {
  static override summary = 'Show one recorded run: who, when, where, what was selected, what it did, and the ids it moved.'
  static override description = 'ID is a run id from bq runs list (or its first characters), or the bq-run-id header of a redriven or replayed message.'
  static override examples = ['<%= config.bin %> runs show 3f2a9c1e', '<%= config.bin %> runs show 3f2a9c1e --ids', '<%= config.bin %> runs show 3f2a9c1e-7b3d-4e6a-8f10-2c4d6e8fa001 --json']
  static override args = {id: Args.string({description: 'the run id, or its start', required: true})}
  static override flags = {
    ids: Flags.boolean({description: 'list every message id the run moved, published or deleted (by default only their counts; --json always has them)'}),
  }

  async run(): Promise<RunRow> {
    const {args, flags} = await this.parse(RunsShow)
    const run = findRun(args.id)
    if (this.jsonEnabled()) return run
    const lines: Array<[string, string | null]> = [
      ['id', run.id], ['command', run.command], ['command line', `bq ${run.command_line}`], ['user', `${run.user}@${run.host}`],
      ['started', run.started_at], ['ended', run.ended_at], ['broker', run.broker], ['target broker', run.target_broker],
      ['source', run.source], ['target', run.target], ['selection', JSON.stringify(run.selection)], ['reason', run.reason],
      ['outcome', `${run.outcome}${run.exit_code === null ? '' : ` (exit ${run.exit_code})`}`], ['error', run.error],
      ['counts', run.counts === null ? null : Object.entries(run.counts).map(([k, v]) => `${k}=${v}`).join(' ')],
    ]
    for (const [name, value] of lines) if (value !== null) this.log(`${`${name}:`.padEnd(15)}${value}`)
    // A canary redrive's stages, as each ended (a run killed outright keeps those that did).
    for (const stage of run.stages ?? []) this.log(`${`stage ${String(stage.stage)}:`.padEnd(15)}${stageLine(stage)}`)
    // A run can touch many thousands of messages: counts unless the ids are asked for.
    for (const [what, ids] of Object.entries(run.ids ?? {})) {
      if (!flags.ids) {
        this.log(`${`${what}:`.padEnd(15)}${ids.length} id${ids.length === 1 ? '' : 's'} (--ids lists them)`)
        continue
      }
      this.log(`${what} (${ids.length}):`)
      for (const id of ids) this.log(`  ${id}`)
    }
    return run
  }
}

function stageLine(stage: Record<string, unknown>): string {
  const watched = typeof stage.watch_seconds === 'number' ? `, watched ${stage.watch_seconds}s` : ''
  return `size ${String(stage.size)}, moved ${String(stage.moved)}, returned ${String(stage.returned ?? 0)}${watched}${stage.aborted === true ? ' (aborted)' : ''}`
}
