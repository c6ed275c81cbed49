/**
 * A command oclif can find without loading it. oclif's explicit discovery only needs a `run`
 * from the commands index before a command starts (help, ids, flags and topics come from
 * oclif.manifest.json), so the index holds one of these per command and the command's own
 * module (with ajv, the codec, the broker layer behind it) is imported only when it runs:
 * `bq --help` and `bq validate x.json` do not pay for the twenty other commands.
 */
import type {Command, Config} from '@oclif/core'

export type CommandClass = typeof Command & {run(argv?: string[], config?: Config): Promise<unknown>}
export type CommandLoader = () => Promise<{default: CommandClass}>

/** What oclif keeps of a found command: it sets `id` and `plugin` on it, then calls `run`. */
export interface LazyCommand {
  id?: string
  plugin?: Command.Class['plugin']
  load: CommandLoader
  run(argv: string[], config: Config): Promise<unknown>
}

export function lazyCommand(load: CommandLoader): LazyCommand {
  return {
    load,
    async run(argv, config) {
      const {default: command} = await load()
      // What oclif would have set on the class had it found the class itself.
      if (this.id !== undefined) command.id = this.id
      command.plugin = this.plugin
      return command.run(argv, config)
    },
  }
}

/**
 * A command from one of oclif's plugins (help, version, autocomplete), listed in bq's own index
 * rather than loaded as a plugin: oclif reads a plugin's package.json and manifest and searches
 * for its root on every start, which cost about a tenth of bq's start for three commands that
 * are rarely run. The plugins' package exports name only their index, so the command's file is
 * found next to it.
 */
export function pluginCommand(packageName: string, commandFile: string): LazyCommand {
  const command = lazyCommand(async () => import(new URL(`./commands/${commandFile}`, import.meta.resolve(packageName)).href))
  const run = command.run
  // These commands know no --json: bq answers it with its own envelope (plugin-json.ts).
  command.run = async function (this: LazyCommand, argv, config) {
    if (!wantsJson(argv)) return run.call(this, argv, config)
    const {pluginJson} = await import('./plugin-json.js')
    return pluginJson(this.id ?? '', argv, config)
  }
  return command
}

/** `--json` among the words before a `--`. */
function wantsJson(argv: string[]): boolean {
  const end = argv.indexOf('--')
  return (end === -1 ? argv : argv.slice(0, end)).includes('--json')
}

/**
 * The command classes themselves, for writing the manifest (`BQ_MANIFEST_BUILD=1 oclif
 * manifest` in the build): oclif reads each command's flags, args and texts from its class.
 */
export async function loadCommandClasses(commands: Record<string, LazyCommand>): Promise<Record<string, CommandClass>> {
  const entries = await Promise.all(Object.entries(commands).map(async ([id, command]) => [id, (await command.load()).default] as const))
  return Object.fromEntries(entries)
}
