/**
 * `--json` on oclif's own commands (help, version, autocomplete), which know no such flag: the
 * README promises every command's `--json` prints bq's one envelope (src/lib/output/json-output.ts).
 * version and help answer with their facts; autocomplete writes shell text, so under --json it is
 * a usage error, in the envelope.
 */
import type {Command, Config} from '@oclif/core'

import {ExitCode} from '../errors.js'
import {failureJson, successJson} from '../output/json-output.js'
import type {JsonOutput} from '../output/json-output.js'

export function printJson(output: JsonOutput): void {
  process.stdout.write(`${JSON.stringify(output, null, 2)}\n`)
}

/** A usage error in the envelope, exit 2 (the process ends with it once the command returns). */
export function printUsageJson(message: string): void {
  printJson(failureJson({code: 'usage', message, exitCode: ExitCode.usage}, undefined, []))
  process.exitCode = ExitCode.usage
}

/** Answers oclif's command `id` under --json. */
export function pluginJson(id: string, argv: string[], config: Config): void {
  if (id === 'version') {
    printJson(successJson({version: config.version, cli_version: `${config.bin}/${config.version}`, architecture: `${config.platform}-${config.arch}`, node_version: process.version}, []))
    return
  }
  if (id === 'help') return helpJson(argv.filter((word) => !word.startsWith('-')), config)
  printUsageJson(`${config.bin} ${id.replaceAll(':', ' ')} writes shell setup text, not JSON: run it without --json`)
}

function helpJson(words: string[], config: Config): void {
  const visible = config.commands.filter((command) => !command.hidden)
  if (words.length === 0) {
    printJson(successJson({commands: visible.map((command) => ({command: spoken(command.id), summary: command.summary ?? null}))}, []))
    return
  }
  const id = words.join(':')
  const command = config.findCommand(id) ?? visible.find((c) => c.aliases.includes(id))
  if (command === undefined) return printUsageJson(`"${words.join(' ')}" is not a ${config.bin} command (${config.bin} help lists them)`)
  printJson(successJson(commandHelp(command, config), []))
}

function commandHelp(command: Command.Loadable, config: Config): Record<string, unknown> {
  const bin = (text: string) => text.replaceAll('<%= config.bin %>', config.bin)
  const examples = (command.examples ?? []).map((example) => bin(typeof example === 'string' ? example : example.command))
  return {
    command: spoken(command.id),
    summary: command.summary ?? null,
    description: command.description === undefined ? null : bin(command.description),
    aliases: command.aliases.map(spoken),
    args: Object.values(command.args ?? {}).map((arg) => ({name: arg.name, description: arg.description ?? null, required: arg.required ?? false})),
    flags: Object.values(command.flags ?? {}).map((flag) => ({name: flag.name, char: flag.char ?? null, description: flag.description ?? null, type: flag.type})),
    examples,
  }
}

/** A command id as typed: `dlq:redrive` → `dlq redrive`. */
function spoken(id: string): string {
  return id.replaceAll(':', ' ')
}
