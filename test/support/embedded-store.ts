/**
 * Reads of the embedded store (sqlite://) from the test's own process, for tests that check what
 * a command left behind: opening the store here costs milliseconds, where a `bq peek` to read a
 * depth costs a whole start of bq (0.2-0.3 CPU s). The command under test still runs through
 * bin/run.js; only the check reads directly, with the same adapter bq itself uses.
 */
import type {BrokerAdapter} from '../../src/lib/brokers/adapter.js'
import {openBroker} from '../../src/lib/brokers/registry.js'

async function withStore<T>(url: string, read: (adapter: BrokerAdapter) => Promise<T>): Promise<T> {
  const adapter = await openBroker(url)
  try {
    return await read(adapter)
  } finally {
    await adapter.close()
  }
}

/** How many messages a consumer could take now, as `bq peek` reports the depth. */
export function storeDepth(url: string, queue: string): Promise<number> {
  return withStore(url, (adapter) => adapter.count(queue))
}

/** The meta.id of every waiting message, in queue order, as `bq peek --all` lists them. */
export function storeIds(url: string, queue: string): Promise<string[]> {
  return withStore(url, async (adapter) => {
    const messages = await adapter.browse(queue, {limit: Number.MAX_SAFE_INTEGER, offset: 0})
    return messages.map((message) => (JSON.parse(message.body.toString('utf8')) as {meta: {id: string}}).meta.id)
  })
}

/** The first `limit` bodies waiting, in queue order, as stored (what `bq peek --json --limit N` prints, decoded). */
export function storeBodies(url: string, queue: string, limit: number): Promise<string[]> {
  return withStore(url, async (adapter) => (await adapter.browse(queue, {limit, offset: 0})).map((message) => message.body.toString('utf8')))
}

/** A URL of the embedded store, which the test process can open beside bq. */
export function isEmbeddedStore(url: string): boolean {
  return url.startsWith('sqlite:')
}
