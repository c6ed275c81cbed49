/**
 * The vocabulary of `bq schema compat`: a finding is one way data valid under the OLD schema
 * could be rejected by the NEW one (breaking), or a change whose effect cannot be decided
 * statically (unproven), or a caution that does not fail the gate (warning).
 */

export type CompatSeverity = 'breaking' | 'unproven' | 'warning'

export interface CompatFinding {
  severity: CompatSeverity
  /** The rule, `<keyword>.<change>`: `required.added`, `maxLength.lowered`, `oneOf.branch-added`. */
  rule: string
  /** Where in the data: `$`, `$.customer.email`, `$.lines[*].sku`. */
  path: string
  /** The JSON pointer of the change in the schema file named by `side` (`/properties/email/pattern`). */
  schemaPath: string
  /** Which file `schemaPath` points into: the new schema, or the old one for something removed. */
  side: 'old' | 'new'
  message: string
}

/** A schema together with where it sits in its document (a JSON pointer; null when synthesized). */
export interface Located {
  schema: unknown
  pointer: string | null
}

export const JSON_TYPES = ['null', 'boolean', 'object', 'array', 'number', 'integer', 'string'] as const
export type JsonType = (typeof JSON_TYPES)[number]

/** What a rule can ask of the comparison it is part of. */
export interface CompareContext {
  /** Compares two sub-schemas at a data path (findings go into this comparison). */
  compare(old: Located, next: Located, path: string, options?: SubCompare): void
  /** The findings comparing two sub-schemas would give, without recording them. */
  probe(old: Located, next: Located, options?: SubCompare): CompatFinding[]
  /** The same, with a NEW sub-schema in OLD's place and an OLD one in NEW's (is NEW's `not` within OLD's?). */
  probeReversed(fromNew: Located, fromOld: Located): CompatFinding[]
  /** The instance types a schema can accept (all of them when it says nothing). */
  typesOf(schema: Located, side: 'old' | 'new'): ReadonlySet<JsonType>
  report(finding: Omit<CompatFinding, 'side'> & {side?: 'old' | 'new'}): void
  /** Whether a value of OLD's document and one of NEW's are the same schema, $refs followed. */
  same(oldValue: unknown, newValue: unknown): boolean
}

export interface SubCompare {
  /** Only these instance types matter (a propertyNames schema sees strings only). */
  domain?: ReadonlySet<JsonType>
  /** The rule to name when NEW is `false` where OLD was not (`property.removed`). */
  falseRule?: string
  /** What this comparison finds is not proven to break (the data it concerns may not exist). */
  unproven?: boolean
}
