import type {BrokerAdapter} from '../brokers/adapter.js'
import {openBroker, resolveBrokerUrl} from '../brokers/registry.js'

/** Opens the broker a command was pointed at, runs `work`, and always closes it. */
export async function withBroker<T>(flag: string | undefined, work: (adapter: BrokerAdapter) => Promise<T>): Promise<T> {
  const adapter = await openBroker(resolveBrokerUrl(flag))
  try {
    return await work(adapter)
  } finally {
    await adapter.close()
  }
}
