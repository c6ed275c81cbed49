/**
 * Opt-in runs against a real Service Bus namespace (BQ_TEST_ASB_CONNECTION_STRING): real Service Bus
 * requires entities to exist, so this wrapper creates each queue a test names (through the
 * management API, which needs a Manage key) before the adapter touches it, and deletes them after.
 */
import {ServiceBusAdministrationClient} from '@azure/service-bus'

import type {BrokerAdapter} from '../../../../src/lib/brokers/adapter.js'

export const realConnectionString = process.env.BQ_TEST_ASB_CONNECTION_STRING?.trim() || undefined

function queueOf(name: string): string {
  return name.replace(/\/\$deadletterqueue$/i, '')
}

export class RealNamespace {
  private readonly admin: ServiceBusAdministrationClient
  private readonly created = new Set<string>()

  constructor(connectionString: string) {
    this.admin = new ServiceBusAdministrationClient(connectionString)
  }

  async ensure(name: string): Promise<void> {
    const queue = queueOf(name)
    if (this.created.has(queue)) return
    if (!(await this.admin.queueExists(queue))) await this.admin.createQueue(queue, {lockDuration: 'PT30S'})
    this.created.add(queue)
  }

  /** The adapter with every queue-taking call preceded by ensure(). */
  wrap(adapter: BrokerAdapter): BrokerAdapter {
    const ensure = (queue: string) => this.ensure(queue)
    return {
      kind: adapter.kind,
      displayUrl: adapter.displayUrl,
      capabilities: adapter.capabilities,
      binding: adapter.binding,
      publish: async (queue, messages) => (await ensure(queue), adapter.publish(queue, messages)),
      browse: async (queue, options) => (await ensure(queue), adapter.browse(queue, options)),
      count: async (queue) => (await ensure(queue), adapter.count(queue)),
      drain: async (queue, options) => (await ensure(queue), adapter.drain(queue, options)),
      recover: (queue) => adapter.recover(queue),
      listQueues: () => adapter.listQueues(),
      close: () => adapter.close(),
    }
  }

  async cleanup(): Promise<void> {
    for (const queue of this.created) await this.admin.deleteQueue(queue).catch(() => undefined)
    this.created.clear()
  }
}
