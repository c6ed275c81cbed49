import {Flags} from '@oclif/core'

import {BqCommand} from '../../lib/cli/base-command.js'
import {sharedFlags} from '../../lib/cli/flags.js'
import {InvalidInputError, UsageError} from '../../lib/errors.js'
import {writeSchemaReport} from '../../lib/output/schema-report.js'
import type {SchemaFormat} from '../../lib/output/schema-report.js'
import {OutputWriter} from '../../lib/output/writer.js'
import type {RegistryCheck} from '../../lib/schema/check.js'

export default class SchemaCheck extends BqCommand {
  static override summary = 'Check a schema registry: every file exists and parses, compiles, URNs are well-formed and unique, $refs resolve.'
  static override description = `Reports every broken entry, each with its file (and line): a file that is missing, outside the registry's folder or not JSON; a URN that is not one (urn:<namespace>:<name>) or is registered twice; a $ref that is not local, points at nothing, or is a cycle; a schema bq's validator cannot compile. URN convention issues (spec-urn.md) are warnings.

Exit status: 0 when the registry is sound, 1 when any entry is broken, 2 when registry.json itself cannot be read.`
  static override examples = [
    '<%= config.bin %> schema check --registry registry.json',
    '<%= config.bin %> schema check -r registry.json --format github',
  ]
  static override flags = {
    registry: sharedFlags.registry,
    format: sharedFlags.ciFormat,
    quiet: Flags.boolean({char: 'q', description: 'text format: print only the entries with problems, and the summary'}),
  }

  async run(): Promise<RegistryCheck> {
    const {flags} = await this.parse(SchemaCheck)
    if (flags.registry === undefined) throw new UsageError('--registry is required (the registry.json to check)')
    const {checkRegistry} = await import('../../lib/schema/check.js')
    const result = await checkRegistry(flags.registry)
    if (!this.jsonEnabled()) {
      const out = new OutputWriter()
      const summary = `${result.entries.length} schema${result.entries.length === 1 ? '' : 's'} in ${result.registry}: ${result.errors === 0 ? 'all sound' : `${result.entries.filter((e) => e.issues.some((i) => i.severity === 'error')).length} broken`} (${result.errors} error${result.errors === 1 ? '' : 's'}, ${result.warnings} warning${result.warnings === 1 ? '' : 's'})`
      writeSchemaReport(out, flags.format as SchemaFormat, {command: 'bq schema check', cases: result.entries.map((e) => ({name: e.urn, file: e.file, issues: e.issues})), summary}, {quiet: flags.quiet})
      await out.flush()
    }
    if (result.errors > 0) throw new InvalidInputError(`${result.errors} problem${result.errors === 1 ? '' : 's'} in ${result.registry}`, result)
    return result
  }
}
