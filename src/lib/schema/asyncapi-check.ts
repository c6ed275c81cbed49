import {createRequire} from 'node:module'

import type {ValidateFunction} from 'ajv'

import {newAjv} from './registry.js'

/**
 * export-asyncapi checks what it is about to write against the AsyncAPI 3.0.0 JSON Schema
 * (`@asyncapi/specs`, the AsyncAPI project's own). The schema (about 370 KB) is read and
 * compiled only by export-asyncapi, and only once its document is built.
 */
const SPEC = '@asyncapi/specs/schemas/3.0.0-without-$id.json'

let validate: ValidateFunction | undefined

export interface AsyncApiProblem {
  /** JSON pointer into the document. */
  pointer: string
  message: string
  /** The URN whose channel, message or schema the problem is in, when it is in one. */
  urn?: string
}

/** The first problem of `document` under the AsyncAPI 3.0.0 JSON Schema; undefined when valid. */
export function asyncApiProblem(document: Record<string, unknown>): AsyncApiProblem | undefined {
  validate ??= newAjv({allErrors: false, addUsedSchema: false}).compile(createRequire(import.meta.url)(SPEC) as object)
  // A plain boolean: ajv's type guard would narrow the document to never below.
  const valid: boolean = validate(document as unknown)
  if (valid) return undefined
  // The deepest error names the keyword at fault (the outer ones are oneOf/anyOf summaries).
  const errors = validate.errors ?? []
  const error = errors.reduce((deepest, e) => (e.instancePath.length > deepest.instancePath.length ? e : deepest), errors[0])
  const pointer = error?.instancePath ?? ''
  const [first, second, third] = pointer.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
  const id = first === 'channels' ? second : first === 'components' ? third : undefined
  const channel = id === undefined ? undefined : (document.channels as Record<string, {address?: unknown}> | undefined)?.[id]
  const urn = typeof channel?.address === 'string' ? channel.address : undefined
  return {pointer: pointer || '/', message: error?.message ?? 'is not a valid AsyncAPI 3.0.0 document', ...(urn === undefined ? {} : {urn})}
}
