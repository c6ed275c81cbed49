/** The embedded store (`sqlite://PATH`, better-sqlite3): bq's default broker. */
import {resolve} from 'node:path'

import type {BrokerModule} from '../adapter.js'
import {defaultBrokerUrl} from '../default-url.js'
import {openSqliteAdapter} from './adapter.js'
import {sqlitePath} from './url.js'

export const broker: BrokerModule = {
  open: async (rawUrl, displayUrl) => {
    const path = sqlitePath(rawUrl, displayUrl)
    // Only the default store's directory is created (see openSqliteAdapter).
    const isDefault = resolve(path) === resolve(sqlitePath(defaultBrokerUrl()))
    return openSqliteAdapter(path, displayUrl, {createDirectories: isDefault})
  },
}

export {openSqliteAdapter} from './adapter.js'
export {SqliteDrainSession} from './drain.js'
export {sqlitePath} from './url.js'
