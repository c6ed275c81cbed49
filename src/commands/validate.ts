import {Args, Flags} from '@oclif/core'

import {BqCommand} from '../lib/cli/base-command.js'
import {InvalidInputError, UsageError} from '../lib/errors.js'
import {validateInputs} from '../lib/ops/validate-messages.js'
import type {MessageResult, ValidateSummary} from '../lib/ops/validate-messages.js'
import {githubReporter, jsonlReporter, junitReporter, textReporter} from '../lib/output/validate-report.js'
import type {FinishingReporter} from '../lib/output/validate-report.js'
import {OutputWriter} from '../lib/output/writer.js'

export interface ValidateResult {
  summary: ValidateSummary
  /** Every message that has at least one problem (valid messages are only counted). */
  results: MessageResult[]
}

export default class Validate extends BqCommand {
  static override summary = 'Check envelopes (and their data against a schema registry) in files, directories, globs or stdin.'
  static override description = `Each input is one JSON envelope or JSONL (one envelope per line, reported with its line number). Every problem is reported with its JSON path and a severity; warnings become errors with --strict.

Exit status: 0 when everything is valid, 1 when anything is invalid, 2 for usage errors.`
  static override examples = [
    '<%= config.bin %> validate message.json',
    "<%= config.bin %> validate 'contracts/**/*.json' --registry registry.json --strict",
    '<%= config.bin %> validate export.jsonl --quiet',
    'cat data.json | <%= config.bin %> validate - --urn urn:babel:orders:created --registry registry.json',
    '<%= config.bin %> validate contracts --format github',
  ]
  static override strict = false
  static override args = {
    inputs: Args.string({description: 'files, directories, glob patterns, or - for stdin'}),
  }
  static override flags = {
    registry: Flags.string({char: 'r', description: 'babelqueue-registry registry.json: validate each message\'s data against its URN\'s schema'}),
    urn: Flags.string({description: 'the inputs are bare data objects for this URN (needs --registry)'}),
    strict: Flags.boolean({description: 'treat warnings (including a URN with no registered schema) as errors'}),
    format: Flags.string({char: 'f', description: 'report format', options: ['text', 'github', 'junit', 'jsonl'], default: 'text'}),
    quiet: Flags.boolean({char: 'q', description: 'text format: print only messages with problems, and the summary'}),
  }

  async run(): Promise<ValidateResult> {
    const {argv, flags} = await this.parse(Validate)
    const inputs = argv as string[]
    if (inputs.length === 0) throw new UsageError('nothing to validate: give files, directories, glob patterns, or - for stdin')
    if (flags.urn !== undefined && flags.registry === undefined) throw new UsageError('--urn needs --registry (the schema to check the data against)')

    // ajv loads only when a registry is used: plain envelope checks stay fast to start.
    const registry = flags.registry === undefined ? undefined : (await import('../lib/schema/registry.js')).SchemaRegistry.load(flags.registry)
    const json = this.jsonEnabled()
    const out = new OutputWriter()
    const failing: MessageResult[] = []
    const reporter: FinishingReporter | undefined = json ? undefined : pickReporter(flags.format, out, flags.quiet)
    const summary = await validateInputs(inputs, {registry, urn: flags.urn, strict: flags.strict}, {
      result(result) {
        if (json) {
          if (result.problems.length > 0) failing.push(result)
        } else {
          reporter?.result(result)
        }
      },
      drain: () => out.maybeFlush(),
    })
    reporter?.finish(summary)
    await out.flush()
    const result: ValidateResult = {summary, results: failing}
    if (summary.invalid > 0) throw new InvalidInputError(`${summary.invalid} of ${summary.messages} message${summary.messages === 1 ? '' : 's'} invalid`, result)
    return result
  }
}

function pickReporter(format: string, out: OutputWriter, quiet: boolean): FinishingReporter {
  switch (format) {
    case 'github': return githubReporter(out)
    case 'junit': return junitReporter(out)
    case 'jsonl': return jsonlReporter(out)
    default: return textReporter(out, {quiet})
  }
}
