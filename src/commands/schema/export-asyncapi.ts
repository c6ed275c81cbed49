import {writeFileSync} from 'node:fs'

import {Flags} from '@oclif/core'

import {BqCommand} from '../../lib/cli/base-command.js'
import {sharedFlags} from '../../lib/cli/flags.js'
import {UsageError, describeError} from '../../lib/errors.js'
import {escapeData, escapeProperty} from '../../lib/output/ci-escape.js'
import {writeSchemaReport} from '../../lib/output/schema-report.js'
import type {SchemaFormat} from '../../lib/output/schema-report.js'
import {OutputWriter} from '../../lib/output/writer.js'

export interface ExportResult {
  /** The file written; absent when the document went to stdout. */
  output?: string
  channels: number
  document?: Record<string, unknown>
}

export default class SchemaExportAsyncapi extends BqCommand {
  static override summary = 'Write the registry as an AsyncAPI 3.0 event catalog: a channel and message per URN.'
  static override description = `Each message's payload is the BabelQueue envelope (schema_version 1) whose data is the URN's schema (kept whole under components.schemas, x-gdpr-sensitive and every annotation included). A channel's address is its URN.

Writes to stdout, or to -o FILE. With -o, --format github or junit reports the export for CI (a notice; a test case per URN). Exit status: 0, or 2 when the registry cannot be read (a missing or non-JSON schema, an entry outside the registry's folder).`
  static override examples = [
    '<%= config.bin %> schema export-asyncapi --registry registry.json -o asyncapi.json',
    '<%= config.bin %> schema export-asyncapi -r registry.json --title "Orders events" --version 2.1.0',
  ]
  static override flags = {
    registry: sharedFlags.registry,
    output: Flags.string({char: 'o', description: 'write the document to this file instead of stdout'}),
    title: Flags.string({description: 'the document\'s info.title', default: 'BabelQueue events'}),
    version: Flags.string({description: 'the document\'s info.version (the catalog\'s version, not AsyncAPI\'s)', default: '1.0.0'}),
    format: sharedFlags.ciFormat,
  }

  async run(): Promise<ExportResult> {
    const {flags} = await this.parse(SchemaExportAsyncapi)
    if (flags.registry === undefined) throw new UsageError('--registry is required (the registry.json to export)')
    if (flags.format !== 'text' && flags.output === undefined) throw new UsageError(`--format ${flags.format} needs -o FILE: the document and the report would share stdout`)
    const {readManifest} = await import('../../lib/schema/manifest.js')
    const {buildAsyncApi} = await import('../../lib/schema/asyncapi.js')
    const manifest = readManifest(flags.registry, {confined: true})
    const document = buildAsyncApi(manifest, {title: flags.title, version: flags.version})
    const text = `${JSON.stringify(document, null, 2)}\n`
    const channels = manifest.entries.length
    if (flags.output !== undefined) {
      try {
        writeFileSync(flags.output, text)
      } catch (error) {
        throw new UsageError(`cannot write ${flags.output}: ${describeError(error)}`)
      }
      const summary = `wrote ${flags.output}: AsyncAPI 3.0.0, ${channels} channel${channels === 1 ? '' : 's'}`
      if (this.jsonEnabled()) return {output: flags.output, channels}
      if (flags.format === 'text') {
        process.stderr.write(`${summary}\n`)
      } else {
        const {relative} = await import('node:path')
        const file = relative(process.cwd(), manifest.path) || manifest.path
        const out = new OutputWriter()
        writeSchemaReport(out, flags.format as SchemaFormat, {command: 'bq schema export-asyncapi', cases: manifest.entries.map((e) => ({name: e.urn, file, issues: []})), summary})
        if (flags.format === 'github') out.line(`::notice file=${escapeProperty(file)},title=bq schema export-asyncapi::${escapeData(summary)}`)
        await out.flush()
      }
      return {output: flags.output, channels}
    }
    if (!this.jsonEnabled()) process.stdout.write(text)
    return {channels, document}
  }
}
