import {spawnSync} from 'node:child_process'
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {readBoundedText} from './bounded-file.js'

/** What came back from the editor. `path` is the file, kept until `discard` is called. */
export type EditorOutcome =
  | {kind: 'edited'; text: string; path: string; discard: () => void}
  | {kind: 'unchanged' | 'empty' | 'editor_failed'; detail: string}

/**
 * Opens `text` in $VISUAL, else $EDITOR, else vi, as `name` in a private temporary directory, and
 * waits for it. The command runs through the shell, so an editor with arguments (`code --wait`,
 * `sed -i ...` in tests) works. A file left unchanged or empty, or an editor that fails, is an
 * abort: the file is removed and nothing comes back.
 */
export function editInEditor(text: string, name: string): EditorOutcome {
  const editor = process.env.VISUAL || process.env.EDITOR || 'vi'
  const directory = mkdtempSync(join(tmpdir(), 'bq-edit-'))
  const path = join(directory, name.replace(/[^\w.-]/g, '_'))
  const discard = () => rmSync(directory, {recursive: true, force: true})
  writeFileSync(path, text, {mode: 0o600})
  const run = spawnSync('/bin/sh', ['-c', `${editor} "$1"`, 'sh', path], {stdio: 'inherit'})
  if (run.error !== undefined || run.status !== 0) {
    discard()
    const why = run.error?.message ?? (run.signal ? `was killed by ${run.signal}` : `exited with status ${run.status}`)
    return {kind: 'editor_failed', detail: `the editor (${editor}) ${why}`}
  }
  let edited: string
  try {
    edited = readBoundedText(path, 'edit buffer')
  } catch (error) {
    discard()
    throw error
  }
  if (edited === text) {
    discard()
    return {kind: 'unchanged', detail: 'the file was left unchanged'}
  }
  if (edited.trim() === '') {
    discard()
    return {kind: 'empty', detail: 'the file was emptied'}
  }
  return {kind: 'edited', text: edited, path, discard}
}
