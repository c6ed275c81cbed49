import type {BrokerAdapter} from '../brokers/adapter.js'

/**
 * On brokers where a queue that was never there reads as empty (Redis, the embedded store), a
 * misspelled name would pass for an empty queue and the command would end with exit 0 and no
 * word: says so instead (the command still ends as for an empty queue).
 */
export async function warnIfMissing(adapter: BrokerAdapter, queue: string, warn: (text: string) => void): Promise<void> {
  if (adapter.queueExists === undefined || (await adapter.queueExists(queue))) return
  const what = adapter.kind === 'redis' ? 'its key does not exist' : 'nothing was ever stored under that name, or all of it was taken'
  warn(`no queue ${queue} on ${adapter.displayUrl} (${what}): a misspelled name? bq dlq ls lists the DLQs`)
}
