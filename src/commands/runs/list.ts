import {Flags} from '@oclif/core'

import {BqCommand} from '../../lib/cli/base-command.js'
import {listRuns} from '../../lib/ledger/read.js'
import type {RunRow} from '../../lib/ledger/store.js'
import {renderTable} from '../../lib/output/table.js'

export default class RunsList extends BqCommand {
  static override summary = 'List the recorded runs that changed a broker (publish, redrive, replay, recover), newest first.'
  static override description = `Every run that changes a broker is recorded in the run ledger, in bq's local state (the embedded store's file, $XDG_DATA_HOME/bq/queues.db, or $BQ_LEDGER): who, when, which broker (password hidden), the command line (secrets hidden, message data left out), the selection, the counts, the outcome and the ids moved or published, with --reason when given. Dry runs change nothing and are not recorded.`
  static override examples = ['<%= config.bin %> runs list', '<%= config.bin %> runs list --limit 5 --json']
  static override flags = {
    limit: Flags.integer({char: 'l', description: 'show this many runs', default: 20, min: 1}),
  }

  async run(): Promise<{runs: Array<Omit<RunRow, 'ids'>>}> {
    const {flags} = await this.parse(RunsList)
    // The ids can be many: `bq runs show` has them.
    const runs = listRuns(flags.limit).map(({ids: _ids, ...run}) => run)
    if (this.jsonEnabled()) return {runs}
    if (runs.length === 0) {
      this.log('no runs recorded')
      return {runs}
    }
    const rows = runs.map((r) => [r.id.slice(0, 8), r.started_at, r.user, r.command, r.broker, r.outcome, counts(r.counts), r.reason ?? '-'])
    this.log(await renderTable(['id', 'started', 'user', 'command', 'broker', 'outcome', 'counts', 'reason'], rows))
    return {runs}
  }
}

function counts(values: Record<string, number> | null): string {
  if (values === null) return '-'
  return Object.entries(values).filter(([, n]) => n > 0).map(([name, n]) => `${name}=${n}`).join(' ') || '0'
}
