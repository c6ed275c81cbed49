import {relative} from 'node:path'

import {Args, Flags} from '@oclif/core'

import {BqCommand} from '../../lib/cli/base-command.js'
import {sharedFlags} from '../../lib/cli/flags.js'
import {InvalidInputError, UnprovenError, UsageError} from '../../lib/errors.js'
import {writeSchemaReport} from '../../lib/output/schema-report.js'
import type {SchemaCase, SchemaFormat, SchemaReport} from '../../lib/output/schema-report.js'
import {OutputWriter} from '../../lib/output/writer.js'
import type {SampleResult} from '../../lib/schema/compat-sample.js'
import type {FindingJson, UrnJson, Verdict} from '../../lib/schema/compat-report.js'

export interface CompatJson {
  verdict: Verdict
  breaking: number
  unproven: number
  warnings: number
  old?: string
  new?: string
  findings?: FindingJson[]
  registry?: string
  against?: string
  urns?: UrnJson[]
  sample?: SampleResult
  /** A value OLD accepts and NEW rejects (bq's validator), for a breaking or unproven change. */
  witness?: {value: unknown}
}

export default class SchemaCompat extends BqCommand {
  static override summary = 'Is a schema change backward-compatible? Every way data valid under OLD could be rejected by NEW.'
  static override description = `Compares two data schemas (OLD.json NEW.json), or every schema of a registry with its version at a git ref (--registry R --against REF). Each finding names its JSON path and rule (docs/schema-governance.md lists them all). A URN whose schema breaks gets the URN to mint instead (…:created → …:created.v2).

--sample FILE (or - for stdin) runs real envelopes (a bq peek --jsonl export) through NEW, and OLD: data OLD accepted and NEW rejects is a proven break.

Exit status: 0 compatible, 1 breaking (or --strict and anything unproven), 7 nothing known to break but some change cannot be proven compatible (a pattern replaced, a oneOf restructured), 2 usage errors (a missing or non-JSON file, a $ref cycle, an entry outside the registry's folder).`
  static override examples = [
    '<%= config.bin %> schema compat schemas/orders-created.json schemas/orders-created.v2.json',
    '<%= config.bin %> schema compat --registry registry.json --against origin/main --format github',
    '<%= config.bin %> peek orders --jsonl --all | <%= config.bin %> schema compat old.json new.json --sample -',
  ]
  static override args = {
    old: Args.string({description: 'the schema as it was'}),
    new: Args.string({description: 'the schema as it is to be'}),
  }
  static override flags = {
    registry: sharedFlags.registry,
    against: Flags.string({description: 'with --registry: the git ref to compare each schema with (a branch, tag or commit)', dependsOn: ['registry']}),
    sample: Flags.string({description: 'a JSONL file of envelopes (or - for stdin) to validate under NEW (and OLD)'}),
    urn: Flags.string({description: 'with OLD.json NEW.json and --sample: check only the sample\'s envelopes of this URN'}),
    strict: Flags.boolean({description: 'fail (exit 1) on changes that cannot be proven compatible, and on warnings'}),
    format: sharedFlags.ciFormat,
    quiet: Flags.boolean({char: 'q', description: 'text format: print only the URNs or files with problems, and the summary'}),
  }

  async run(): Promise<CompatJson> {
    const {args, flags} = await this.parse(SchemaCompat)
    const registryMode = flags.registry !== undefined
    if (registryMode && (args.old !== undefined || args.new !== undefined)) throw new UsageError('give OLD.json NEW.json, or --registry R --against REF, not both')
    if (registryMode && flags.against === undefined) throw new UsageError('--registry needs --against REF (the git ref to compare with)')
    if (!registryMode && (args.old === undefined || args.new === undefined)) throw new UsageError('give OLD.json and NEW.json (or --registry R --against REF)')
    const report = await import('../../lib/schema/compat-report.js')
    // The sample reader (envelopes, ajv) loads only when there is a sample.
    const sampling = flags.sample === undefined ? undefined : await import('../../lib/schema/compat-sample.js')
    let result: CompatJson
    let schemaReport: SchemaReport
    if (registryMode) {
      const {compareRegistryAgainst} = await import('../../lib/schema/compat-registry.js')
      const compat = await compareRegistryAgainst(flags.registry!, flags.against!)
      for (const warning of compat.warnings) this.warn(warning)
      const urns = report.registryCompatJson(compat)
      const all = urns.flatMap((u) => u.findings)
      const removed = urns.filter((u) => u.status === 'removed').length
      const counts = {breaking: all.filter((f) => f.severity === 'breaking').length + removed, unproven: all.filter((f) => f.severity === 'unproven').length, warnings: all.filter((f) => f.severity === 'warning').length}
      const sample = sampling && (await sampling.checkSample(flags.sample!, (urn) => (urn === undefined ? undefined : compat.schemas.get(urn))))
      const verdict = report.verdictOf(counts, sample)
      const count = (status: string) => urns.filter((u) => u.status === status).length
      result = {verdict, ...counts, registry: compat.registry, against: compat.against, urns, ...(sample ? {sample} : {})}
      schemaReport = report.registryReport(urns, flags.strict, report.summaryLine(verdict, counts, `: ${urns.length} URNs against ${compat.against}: ${count('changed')} changed, ${count('added')} added, ${count('removed')} removed${sample ? `; sample: ${sample.regressions} of ${sample.checked} broken` : ''}`), sample)
    } else {
      const {readJsonFile} = await import('../../lib/schema/manifest.js')
      const {compareSchemas} = await import('../../lib/schema/compat.js')
      const old = readJsonFile(args.old!, 'old schema', 'compat input')
      const next = readJsonFile(args.new!, 'new schema', 'compat input')
      const compat = compareSchemas(old.value, next.value)
      const shown = (file: string) => relative(process.cwd(), file) || file
      const findings = report.findingsJson(compat, {old: {file: shown(args.old!), text: old.text}, next: {file: shown(args.new!), text: next.text}})
      const sample = sampling && (await sampling.checkSample(flags.sample!, (urn) => (flags.urn === undefined || urn === flags.urn ? {old: old.value, next: next.value} : undefined)))
      const counts = {breaking: compat.breaking, unproven: compat.unproven, warnings: compat.warnings}
      const verdict = report.verdictOf(counts, sample)
      result = {verdict, ...counts, old: shown(args.old!), new: shown(args.new!), findings, ...(compat.witness ? {witness: compat.witness} : {}), ...(sample ? {sample} : {})}
      const cases: SchemaCase[] = [{name: `${shown(args.old!)} → ${shown(args.new!)}`, file: shown(args.new!), issues: findings.map((f) => report.issueOf(f, flags.strict))}]
      if (sample) cases.push(report.sampleCase(sample))
      schemaReport = {command: 'bq schema compat', cases, summary: report.summaryLine(verdict, counts, `${compat.witness ? `; witness: ${report.witnessText(compat.witness.value)} is valid under OLD and rejected by NEW` : ''}${sample ? `; sample: ${sample.regressions} of ${sample.checked} broken` : ''}`)}
    }
    if (!this.jsonEnabled()) {
      const out = new OutputWriter()
      writeSchemaReport(out, flags.format as SchemaFormat, schemaReport, {quiet: flags.quiet})
      await out.flush()
    }
    const failsStrict = flags.strict && (result.unproven > 0 || result.warnings > 0)
    if (result.verdict === 'breaking' || failsStrict) throw new InvalidInputError(`schema change is ${result.verdict === 'breaking' ? 'breaking' : 'not proven compatible (--strict)'}`, result)
    if (result.verdict === 'unproven') throw new UnprovenError('schema change cannot be proven compatible', result)
    return result
  }
}
