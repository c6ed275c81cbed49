import type {MessageView} from './message-view.js'

/**
 * One test a message must pass to be selected: the common shape of `--select`, `--where` and
 * `--since`/`--until` (match.ts, where.ts, time-window.ts), in a module of its own so those three
 * and the commands can share it without importing each other.
 */
export interface Selector {
  /** How the selection reads in messages: `reason=failed`, `where data.x > 1`. */
  text: string
  matches: (view: MessageView) => boolean
}
