/**
 * The commands index: oclif's explicit discovery reads this object (package.json
 * `oclif.commands`) instead of scanning folders, and the bundle (src/bq.ts) carries it. Each
 * entry loads its command only when it runs (lib/cli/lazy-command.ts); esbuild makes each
 * `import()` its own chunk. A new command is added here as well as in its own file;
 * test/unit/commands-index.test.ts checks that every file under src/commands is listed.
 */
import {lazyCommand, loadCommandClasses, pluginCommand} from '../lib/cli/lazy-command.js'

const LAZY_COMMANDS = {
  '__complete-queues': lazyCommand(() => import('./__complete-queues.js')),
  'context:add': lazyCommand(() => import('./context/add.js')),
  'context:list': lazyCommand(() => import('./context/list.js')),
  'context:remove': lazyCommand(() => import('./context/remove.js')),
  'context:show': lazyCommand(() => import('./context/show.js')),
  'context:use': lazyCommand(() => import('./context/use.js')),
  'dlq:edit': lazyCommand(() => import('./dlq/edit.js')),
  'dlq:inspect': lazyCommand(() => import('./dlq/inspect.js')),
  'dlq:ls': lazyCommand(() => import('./dlq/ls.js')),
  'dlq:purge': lazyCommand(() => import('./dlq/purge.js')),
  'dlq:recover': lazyCommand(() => import('./dlq/recover.js')),
  'dlq:redrive': lazyCommand(() => import('./dlq/redrive.js')),
  'dlq:triage': lazyCommand(() => import('./dlq/triage.js')),
  'fish-completion': lazyCommand(() => import('./fish-completion.js')),
  'inflight:ls': lazyCommand(() => import('./inflight/ls.js')),
  'inflight:return': lazyCommand(() => import('./inflight/return.js')),
  peek: lazyCommand(() => import('./peek.js')),
  publish: lazyCommand(() => import('./publish.js')),
  replay: lazyCommand(() => import('./replay.js')),
  'runs:list': lazyCommand(() => import('./runs/list.js')),
  'runs:show': lazyCommand(() => import('./runs/show.js')),
  'schema:check': lazyCommand(() => import('./schema/check.js')),
  'schema:compat': lazyCommand(() => import('./schema/compat.js')),
  'schema:export-asyncapi': lazyCommand(() => import('./schema/export-asyncapi.js')),
  'schema:gdpr': lazyCommand(() => import('./schema/gdpr.js')),
  trace: lazyCommand(() => import('./trace.js')),
  validate: lazyCommand(() => import('./validate.js')),
}

/** oclif's own commands, from its plugins (see pluginCommand). */
export const PLUGIN_COMMANDS = {
  autocomplete: pluginCommand('@oclif/plugin-autocomplete', 'autocomplete/index.js'),
  'autocomplete:create': pluginCommand('@oclif/plugin-autocomplete', 'autocomplete/create.js'),
  'autocomplete:script': pluginCommand('@oclif/plugin-autocomplete', 'autocomplete/script.js'),
  help: pluginCommand('@oclif/plugin-help', 'help.js'),
  version: pluginCommand('@oclif/plugin-version', 'version.js'),
}

const ALL_COMMANDS = {...LAZY_COMMANDS, ...PLUGIN_COMMANDS}

/**
 * What oclif reads. The build writes oclif.manifest.json with BQ_MANIFEST_BUILD=1, where oclif
 * needs the classes themselves; every other start gets the lazy entries.
 */
export const COMMANDS = process.env.BQ_MANIFEST_BUILD === '1' ? await loadCommandClasses(ALL_COMMANDS) : ALL_COMMANDS
