import {readFileSync} from 'node:fs'

import {applyEnvelopePatch, parsePatch} from '../envelope/patch.js'
import {UsageError} from '../errors.js'
import type {EnvelopeTransform} from '../ops/redrive-types.js'

/** `--patch FILE`: the patch read and checked (UsageError, exit 2, when unusable), as a redrive transform. */
export function readPatchFile(path: string): EnvelopeTransform {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    throw new UsageError(`--patch ${path}: cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); nothing was changed`, 'patch')
  }
  const patch = parsePatch(text, `--patch ${path}`)
  return (envelope) => applyEnvelopePatch(envelope, patch)
}
