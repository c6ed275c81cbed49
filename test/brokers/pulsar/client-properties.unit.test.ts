/**
 * The properties Pulsar's Java client writes on retry and dead-letter topics are never app headers:
 * not shown as such on read, not copied by a redrive (app-headers.ts). Pure, no broker; the
 * end-to-end check on a live Pulsar is headers.test.ts (headers-suite, redrive).
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {PULSAR_CLIENT_PROPERTIES, isPulsarReserved, pulsarAppHeaders, pulsarPropertiesFor} from '../../../src/lib/brokers/pulsar/app-headers.js'

const clientWritten = {
  REAL_TOPIC: 'persistent://public/default/orders',
  REAL_SUBSCRIPTION: 'billing',
  ORIGIN_MESSAGE_ID: '12:3:-1',
  ORIGIN_MESSAGE_IDY_TIME: '12:3:-1',
  RETRY_TOPIC: 'persistent://public/default/billing-RETRY',
  RECONSUMETIMES: '3',
  DELAY_TIME: '5000',
}

describe('pulsar client bookkeeping properties', () => {
  it('lists every name the Java client writes for its retry and dead-letter topics, once', () => {
    assert.deepEqual(new Set(Object.values(PULSAR_CLIENT_PROPERTIES)), new Set(Object.keys(clientWritten)))
    for (const name of Object.keys(clientWritten)) assert.ok(isPulsarReserved(name), name)
    assert.ok(!isPulsarReserved('tenant'))
  })

  it('leaves only the application properties as app headers', () => {
    assert.deepEqual(pulsarAppHeaders({...clientWritten, tenant: 'acme', 'x-trace': 'abc'}), {tenant: 'acme', 'x-trace': 'abc'})
  })

  it('strips them from what a redrive sends, keeping the app headers and bq\'s own', () => {
    const properties = pulsarPropertiesFor({body: Buffer.from('{}'), appHeaders: {...clientWritten, tenant: 'acme'}} as unknown as Parameters<typeof pulsarPropertiesFor>[0], {'bq-job': 'urn:babel:orders:created'})
    assert.deepEqual(properties, {tenant: 'acme', 'bq-job': 'urn:babel:orders:created'})
  })
})
