import {Flags} from '@oclif/core'

import {BqCommand} from '../../lib/cli/base-command.js'
import {sharedFlags} from '../../lib/cli/flags.js'
import {BqError, InvalidInputError, UsageError} from '../../lib/errors.js'
import {writeSchemaReport} from '../../lib/output/schema-report.js'
import type {SchemaCase, SchemaFormat} from '../../lib/output/schema-report.js'
import {OutputWriter} from '../../lib/output/writer.js'
import type {SensitiveField, UnannotatedField} from '../../lib/schema/gdpr.js'

export interface GdprUrn {
  urn: string
  file: string
  sensitive: SensitiveField[]
  /** With --require: the properties named like personal data that carry no annotation. */
  unannotated?: UnannotatedField[]
}

export interface GdprResult {
  registry: string
  urns?: GdprUrn[]
  /** With --mask: the masked message and the fields masked. */
  masked?: {urn?: string; fields: string[]; envelope: unknown}
}

export default class SchemaGdpr extends BqCommand {
  static override summary = 'The personal data a registry declares (x-gdpr-sensitive): inventory, a CI gate for un-annotated PII, masking.'
  static override description = `Without options: each URN's x-gdpr-sensitive fields and their categories.

--require fails (exit 1) when a property whose name looks like personal data (email, phone, first_name, address, postcode, ip_address, date_of_birth, iban, card, … ; docs/schema-governance.md lists them) is neither annotated nor inside an annotated value. registry.json can add names ("gdpr": {"personal_data_names": [...]}) or take built-in ones off ("not_personal_data_names"); "x-gdpr-sensitive": false marks a property reviewed as not personal.

--mask FILE prints the envelope in FILE with its sensitive data values replaced by "[masked:<category>]", exactly as bq peek masks them (one-way, for logs; not encryption). It fails closed: an envelope whose URN has no schema, or bare data, is refused (exit 1) unless --urn names the schema to mask with or --allow-unmasked says to print it as it is.`
  static override examples = [
    '<%= config.bin %> schema gdpr --registry registry.json',
    '<%= config.bin %> schema gdpr -r registry.json --require --format github',
    '<%= config.bin %> schema gdpr -r registry.json --mask messages/user-registered.json',
  ]
  static override flags = {
    registry: sharedFlags.registry,
    require: Flags.boolean({description: 'fail when a property named like personal data is not annotated x-gdpr-sensitive', exclusive: ['mask']}),
    mask: Flags.string({description: 'print this envelope file (or - for stdin) with its sensitive fields masked'}),
    urn: Flags.string({description: 'with --mask: mask with this URN\'s schema (the file\'s own URN has none, or the file is bare data)', dependsOn: ['mask']}),
    'allow-unmasked': Flags.boolean({description: 'with --mask: print data whose schema is not found as it is, instead of refusing it', dependsOn: ['mask']}),
    format: sharedFlags.ciFormat,
  }

  async run(): Promise<GdprResult> {
    const {flags} = await this.parse(SchemaGdpr)
    if (flags.registry === undefined) throw new UsageError('--registry is required (the registry.json whose schemas declare the personal data)')
    if (flags.mask !== undefined) return this.mask(flags.registry, flags.mask, flags.urn, flags['allow-unmasked'])
    const {readManifest} = await import('../../lib/schema/manifest.js')
    const {inventory, nameRulesOf, unannotated} = await import('../../lib/schema/gdpr.js')
    const {PersonalNameMatcher} = await import('../../lib/schema/personal-data-names.js')
    const {SchemaLines} = await import('../../lib/schema/schema-lines.js')
    const {relative} = await import('node:path')
    const manifest = readManifest(flags.registry, {confined: true})
    const matcher = new PersonalNameMatcher(nameRulesOf(manifest.raw))
    const shown = (file: string) => relative(process.cwd(), file.replace(/#.*$/, '')) || file
    const urns: GdprUrn[] = manifest.entries.map((entry) => ({
      urn: entry.urn,
      file: shown(entry.schemaPath),
      sensitive: inventory(entry.schema),
      ...(flags.require ? {unannotated: unannotated(entry.schema, matcher)} : {}),
    }))
    const result: GdprResult = {registry: shown(manifest.path), urns}
    const missing = urns.reduce((n, u) => n + (u.unannotated?.length ?? 0), 0)
    if (!this.jsonEnabled()) {
      const out = new OutputWriter()
      const cases: SchemaCase[] = manifest.entries.map((entry, i) => {
        const lines = entry.text === undefined ? undefined : new SchemaLines(entry.text)
        const u = urns[i]
        const fields = u.sensitive.map((s) => `${s.field} (${s.category})`).join(', ')
        return {
          name: u.urn,
          file: u.file,
          note: u.sensitive.length === 0 ? 'no personal data declared' : fields,
          issues: (u.unannotated ?? []).map((f) => ({severity: 'error' as const, rule: 'gdpr.unannotated', path: f.field, message: `looks like personal data ("${f.matched}") and is not annotated x-gdpr-sensitive (or x-gdpr-sensitive: false when it is not)`, file: u.file, line: lines?.lineOf(f.pointer)})),
        }
      })
      const declared = urns.reduce((n, u) => n + u.sensitive.length, 0)
      const summary = `${declared} sensitive field${declared === 1 ? '' : 's'} in ${urns.length} URN${urns.length === 1 ? '' : 's'}${flags.require ? `; ${missing} un-annotated` : ''}`
      writeSchemaReport(out, flags.format as SchemaFormat, {command: 'bq schema gdpr', cases, summary})
      await out.flush()
    }
    if (missing > 0) throw new InvalidInputError(`${missing} propert${missing === 1 ? 'y looks' : 'ies look'} like personal data and ${missing === 1 ? 'is' : 'are'} not annotated x-gdpr-sensitive`, result)
    return result
  }

  /** The same masking peek applies (ops/mask.ts), on one envelope file. */
  private async mask(registryPath: string, file: string, urnFlag: string | undefined, allowUnmasked: boolean): Promise<GdprResult> {
    const {SchemaRegistry} = await import('../../lib/schema/registry.js')
    const {Masker} = await import('../../lib/ops/mask.js')
    const {decode, EnvelopeDecodeError} = await import('../../lib/envelope/envelope.js')
    const {readBoundedFile} = await import('../../lib/cli/bounded-file.js')
    const {readFileSync} = await import('node:fs')
    const {describeError} = await import('../../lib/errors.js')
    const registry = SchemaRegistry.load(registryPath)
    let body: Buffer
    try {
      body = file === '-' ? readFileSync(0) : readBoundedFile(file, 'message', {what: '--mask'})
    } catch (error) {
      if (error instanceof UsageError) throw error
      const code = (error as NodeJS.ErrnoException).code
      throw new UsageError(`cannot read --mask ${file}: ${code === 'ENOENT' ? 'no such file' : describeError(error)}`)
    }
    let envelope
    try {
      envelope = decode(body)
    } catch (error) {
      if (error instanceof EnvelopeDecodeError) throw new UsageError(`--mask ${file}: ${error.message} (expected one JSON envelope)`)
      throw error
    }
    // Fails closed: without the schema, which fields are personal data is unknown.
    const bare = envelope.urn === undefined || envelope.node('data') === undefined
    const urn = urnFlag ?? envelope.urn
    if (urnFlag !== undefined && !registry.has(urnFlag)) throw new UsageError(`--urn ${urnFlag}: no schema for it in ${registryPath}`)
    if (urn === undefined || !registry.has(urn) || (bare && urnFlag === undefined)) {
      const why = bare && urnFlag === undefined ? 'is not an envelope with a URN and data' : `has URN ${urn}, which has no schema in ${registryPath}`
      if (!allowUnmasked) throw new BqError(`--mask ${file} ${why}: its personal data cannot be found, so it is not printed (name the schema with --urn, or print it unmasked with --allow-unmasked)`, {code: 'unmaskable'})
      process.stderr.write(`bq: warning: --mask ${file} ${why}: printed unmasked (--allow-unmasked)\n`)
    }
    const masked = urn === undefined || !registry.has(urn) ? undefined : new Masker(registry).mask(envelope, {urn, bare})
    const text = masked?.text ?? envelope.text
    if (!this.jsonEnabled()) process.stdout.write(text.endsWith('\n') ? text : `${text}\n`)
    return {registry: registryPath, masked: {urn, fields: masked?.fields ?? [], envelope: JSON.parse(text)}}
  }
}
