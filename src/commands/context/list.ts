import {BqCommand} from '../../lib/cli/base-command.js'
import {describePasswordRef} from '../../lib/contexts/secret.js'
import {contextsPath, readContexts} from '../../lib/contexts/store.js'
import type {Context} from '../../lib/contexts/store.js'
import {renderTable} from '../../lib/output/table.js'

type Listed = Context & {name: string; current: boolean}

export default class ContextList extends BqCommand {
  static override summary = 'List the contexts; * marks the current one.'
  static override aliases = ['context:ls']
  static override examples = ['<%= config.bin %> context list', '<%= config.bin %> context ls --json']

  async run(): Promise<{file: string; current: string | null; contexts: Listed[]}> {
    await this.parse(ContextList)
    const store = readContexts()
    const contexts = Object.entries(store.contexts)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([name, context]) => ({name, current: name === store.current, ...context}))
    if (!this.jsonEnabled()) {
      if (contexts.length === 0) this.log(`no contexts (bq context add NAME --broker URL saves one in ${contextsPath()})`)
      else {
        const rows = contexts.map((c) => [`${c.current ? '* ' : '  '}${c.name}`, c.broker, c.protected ? 'yes' : '', describePasswordRef(c.password)])
        this.log(await renderTable(['NAME', 'BROKER', 'PROTECTED', 'PASSWORD'], rows))
      }
    }
    return {file: contextsPath(), current: store.current ?? null, contexts}
  }
}
