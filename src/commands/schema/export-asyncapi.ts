import {realpathSync, writeFileSync} from 'node:fs'
import {resolve} from 'node:path'

import {Flags} from '@oclif/core'

import {BqCommand} from '../../lib/cli/base-command.js'
import {sharedFlags} from '../../lib/cli/flags.js'
import {BqError, UsageError, describeError} from '../../lib/errors.js'
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

/** An output that is one of the files read (registry.json, a schema) would be overwritten: refused. */
function refuseOverwritingInput(output: string, inputs: string[]): void {
  const real = (file: string) => {
    try {
      return realpathSync(file)
    } catch {
      return resolve(file)
    }
  }
  const target = real(output)
  const clash = inputs.find((input) => real(input.replace(/#.*$/, '')) === target)
  if (clash !== undefined) throw new UsageError(`-o ${output} is an input of the export (${clash.replace(/#.*$/, '')}): refusing to overwrite it`)
}

export default class SchemaExportAsyncapi extends BqCommand {
  static override summary = 'Write the registry as an AsyncAPI 3.0 event catalog: a channel and message per URN.'
  static override description = `Each message's payload is the BabelQueue envelope (schema_version 1) whose data is the URN's schema (kept whole under components.schemas, x-gdpr-sensitive and every annotation included). A channel's address is its URN.

Writes to stdout, or to -o FILE. With -o, --format github or junit reports the export for CI (a notice; a test case per URN). Nothing is written unless the document is valid under the AsyncAPI 3.0.0 JSON Schema. Exit status: 0, 1 when a schema or the document is invalid (named), or 2 when the registry cannot be read (a missing or non-JSON schema, an entry outside the registry's folder).`
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
    if (flags.output !== undefined) refuseOverwritingInput(flags.output, [manifest.path, ...manifest.entries.map((e) => e.schemaPath)])
    for (const entry of manifest.entries) {
      // AsyncAPI's Schema Object is an object: a boolean schema (or a list) has no place there.
      if (typeof entry.schema !== 'object' || entry.schema === null || Array.isArray(entry.schema)) throw new UsageError(`${entry.urn} (${entry.schemaPath}): the schema is ${JSON.stringify(entry.schema)}, not an object; AsyncAPI cannot carry it`, 'registry')
    }
    // What bq's validator refuses (a type typo, a bad regex, minLength -1) makes an invalid catalog.
    const {compile, newAjv} = await import('../../lib/schema/registry.js')
    const ajv = newAjv()
    for (const entry of manifest.entries) {
      try {
        compile(ajv, entry.schema, `${entry.urn} (${entry.schemaPath})`)
      } catch (error) {
        throw new BqError(`not exported: ${describeError(error)}`, {code: 'invalid-schema'})
      }
    }
    const document = buildAsyncApi(manifest, {title: flags.title, version: flags.version})
    // Nothing is written that is not an AsyncAPI 3.0.0 document (the JSON Schema's verdict).
    const {asyncApiProblem} = await import('../../lib/schema/asyncapi-check.js')
    const invalid = asyncApiProblem(document)
    if (invalid !== undefined) {
      const where = invalid.urn === undefined ? '' : `${invalid.urn} (${manifest.entries.find((e) => e.urn === invalid.urn)?.schemaPath ?? 'its schema'}): `
      throw new BqError(`not exported: ${where}the document is not valid under the AsyncAPI 3.0.0 JSON Schema: ${invalid.pointer} ${invalid.message}`, {code: 'invalid-asyncapi'})
    }
    let text: string
    try {
      text = `${JSON.stringify(document, null, 2)}\n`
    } catch (error) {
      throw new UsageError(`the AsyncAPI document for ${manifest.entries.length} URNs is too large to write: ${describeError(error)}`)
    }
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
