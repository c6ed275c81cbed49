/**
 * draft-07's meta-schema check as ajv standalone code, made at build time: scripts/bundle.js
 * generates it (meta-schema-code.ts) and puts it in this module's place in dist/, so `bq schema
 * check` neither loads ajv nor compiles the meta-schema at every start (together most of its time
 * on a registry of any size). Run from the sources (the unit tests, under tsx) it is undefined,
 * and schema-document.ts checks with ajv's own validateSchema; test/unit/meta-schema-code.test.ts
 * holds the two to the same verdicts.
 */
export interface MetaSchemaValidator {
  (schema: unknown): boolean
  errors?: Array<{instancePath: string; message?: string}> | null
}

export const precompiledMetaSchema: MetaSchemaValidator | undefined = undefined
