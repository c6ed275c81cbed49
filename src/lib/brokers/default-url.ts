/**
 * Where bq keeps its files, and the embedded store it uses when no broker is configured. Its own
 * module so the registry and the embedded store's adapter can both use it without importing each
 * other.
 */
import {homedir} from 'node:os'
import {isAbsolute, join} from 'node:path'

/** `$XDG_DATA_HOME` (only when absolute, as the XDG spec says) or `~/.local/share`. */
export function dataDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_DATA_HOME
  if (xdg !== undefined && xdg !== '' && isAbsolute(xdg)) return xdg
  return join(homedir(), '.local', 'share')
}

/** The embedded store used when nothing is configured. */
export function defaultBrokerUrl(env: NodeJS.ProcessEnv = process.env): string {
  return `sqlite://${join(dataDir(env), 'bq', 'queues.db')}`
}
