/** The embedded store (`sqlite://PATH`, better-sqlite3): bq's default broker. */
import type {BrokerModule} from '../adapter.js'
import {openSqliteAdapter} from './adapter.js'
import {sqlitePath} from './url.js'

export const broker: BrokerModule = {
  open: async (rawUrl, displayUrl) => openSqliteAdapter(sqlitePath(rawUrl, displayUrl), displayUrl),
}

export {openSqliteAdapter} from './adapter.js'
export {SqliteDrainSession} from './drain.js'
export {sqlitePath} from './url.js'
