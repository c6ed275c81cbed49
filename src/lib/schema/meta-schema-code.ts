import standaloneModule from 'ajv/dist/standalone/index.js'

import {newAjv} from './registry.js'

/** The id under which ajv holds draft-07's meta-schema (its default meta-schema). */
const DRAFT_07 = 'http://json-schema.org/draft-07/schema'

/**
 * The CommonJS source of a validator for draft-07's meta-schema, compiled by the ajv bq configures
 * (newAjv), so that it gives validateSchema's verdicts and errors. Used by scripts/bundle.js at
 * build time (precompiled-meta-schema.ts) and by the test that compares the two.
 */
export function metaSchemaValidatorCode(): string {
  const ajv = newAjv({code: {source: true}})
  const validate = ajv.getSchema(DRAFT_07)
  if (validate === undefined) throw new Error(`ajv holds no ${DRAFT_07} meta-schema`)
  // CommonJS seen from ESM: the function is the module's `default` (under tsx, the module itself).
  type Standalone = (ajv: unknown, validate: unknown) => string
  const standalone = (standaloneModule as unknown as {default?: Standalone}).default ?? (standaloneModule as unknown as Standalone)
  return standalone(ajv, validate)
}
