/** Where the official conformance suite lives: ../shared/conformance beside the repo, or $BQ_CONFORMANCE_DIR. */
import {readFileSync} from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')
export const sharedDir = path.resolve(repoRoot, '..', 'shared')
export const conformanceDir = path.resolve(process.env.BQ_CONFORMANCE_DIR || path.join(sharedDir, 'conformance'))
export const registryExamplesDir = path.join(sharedDir, 'registry-examples')

export type Json = Record<string, unknown>

export function loadManifest(): Json {
  return JSON.parse(readFileSync(path.join(conformanceDir, 'manifest.json'), 'utf8')) as Json
}

export function fixturePath(file: string): string {
  return path.join(conformanceDir, file)
}
