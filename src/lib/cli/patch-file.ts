import {applyEnvelopePatch, parsePatch} from '../envelope/patch.js'
import type {EnvelopeTransform} from '../ops/redrive-types.js'
import {readBoundedText} from './bounded-file.js'

/** `--patch FILE`: the patch read and checked (UsageError, exit 2, when unusable), as a redrive transform. */
export function readPatchFile(path: string): EnvelopeTransform {
  const text = readBoundedText(path, 'patch', {what: '--patch', code: 'patch'})
  const patch = parsePatch(text, `--patch ${path}`)
  return (envelope) => applyEnvelopePatch(envelope, patch)
}
