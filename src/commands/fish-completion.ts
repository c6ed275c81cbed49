import {Command} from '@oclif/core'

import {fishCompletionScript} from '../lib/cli/fish-completion.js'
import type {CompletableCommand} from '../lib/cli/fish-completion.js'

/**
 * Prints the fish completion script (the autocomplete plugin covers bash, zsh and PowerShell).
 * Plain oclif Command: it prints a script, never a context line, JSON or an error envelope.
 */
export default class FishCompletion extends Command {
  static override summary = 'Print a fish shell completion script (commands, flags, and queue names from the broker).'
  static override description = 'Install it with: bq fish-completion > ~/.config/fish/completions/bq.fish (bash and zsh: bq autocomplete).'
  static override examples = ['<%= config.bin %> fish-completion > ~/.config/fish/completions/bq.fish']

  async run(): Promise<void> {
    await this.parse(FishCompletion)
    const commands: CompletableCommand[] = this.config.commands
      .filter((command) => !command.hidden)
      .map((command) => ({
        id: command.id,
        summary: command.summary ?? command.description,
        flags: Object.entries(command.flags ?? {})
          .filter(([, flag]) => !flag.hidden)
          .map(([name, flag]) => ({name, char: flag.char, summary: flag.summary ?? flag.description, takesValue: flag.type === 'option'})),
        queueArgument: Object.keys(command.args ?? {})[0] === 'queue',
      }))
    const topics = this.config.topics.map((topic) => ({name: topic.name, summary: topic.description}))
    process.stdout.write(fishCompletionScript(this.config.bin, commands, topics))
  }
}
