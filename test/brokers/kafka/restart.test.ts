// @test-uses private-jvm: starts, SIGKILLs and restarts a private JVM broker of its own (never the shared one); one such file at a time
/**
 * Kafka restarts: a private KRaft instance SIGKILLed mid-redrive and mid-publish, then started
 * again on its log (the shared suite), and the property bq's producer relies on across a restart:
 * a batch resent with the same producer id, epoch and sequence is written once, because the
 * broker rebuilds its producer state from the log.
 *
 * Within one bq run there is one producer session: a send that fails ends the run (exit 4), so no
 * second session can write a record again; resends within the session are byte for byte.
 */
import assert from 'node:assert/strict'
import {test} from 'node:test'

import {encodeRecordBatch, type BatchRecord} from '../../../src/lib/brokers/kafka/client/batch-encoder.js'
import {initProducerId, produce} from '../../../src/lib/brokers/kafka/client/produce-request.js'
import {KafkaPublisher} from '../../../src/lib/brokers/kafka/client/producer.js'
import {KafkaWire, createKafkaClient} from '../../../src/lib/brokers/kafka/client/wire.js'
import {parseKafkaUrl} from '../../../src/lib/brokers/kafka/url.js'
import {uniqueQueue} from '../../support/brokers.js'
import {restartSuite} from '../../suites/restart-suite.js'

const own = restartSuite({
  name: 'Kafka',
  broker: 'kafka',
  redriveMessages: 3000,
  publishMessages: 30_000,
  idempotentPublish: true,
})

/** A wire (and publisher, for creating the topic) on the instance, closed after `work`. */
async function withWire<T>(url: string, work: (wire: KafkaWire, publisher: KafkaPublisher) => Promise<T>): Promise<T> {
  const target = parseKafkaUrl(url, url)
  const kafka = createKafkaClient(target)
  const wire = await KafkaWire.connect(kafka, url, target.secrets)
  const publisher = new KafkaPublisher(kafka, wire, target, url)
  try {
    return await work(wire, publisher)
  } finally {
    await publisher.close()
    await wire.close()
  }
}

const batchOf = (from: number, to: number): BatchRecord[] => Array.from({length: to - from}, (_, i) => ({value: `v${from + i}`, timestamp: Date.now()}))

test('Kafka: a batch written before a SIGKILL and resent after the restart (same producer id and sequence) is stored once', {timeout: 300_000}, async (t) => {
  const b = own.broker(t)
  if (b === undefined) return
  const topic = uniqueQueue('restart-idempotence')
  const first = await withWire(b.url, async (wire, publisher) => {
    await publisher.ensureTopic(topic)
    const [{leader}] = (await wire.layout(topic))!
    // Right after a restart the transaction coordinator may still be loading (retriable): ask again.
    let session
    for (let attempt = 1; session === undefined; attempt++) {
      session = await initProducerId(await wire.broker(leader)).catch(async (error: {retriable?: boolean}) => {
        if (error.retriable !== true || attempt >= 50) throw error
        await new Promise((resolve) => setTimeout(resolve, 500))
        return undefined
      })
    }
    const batch = encodeRecordBatch(batchOf(0, 5), {...session, baseSequence: 0})
    const [written] = await produce(await wire.broker(leader), topic, [{partition: 0, batch}], -1, 30_000)
    assert.equal(written.errorCode, 0)
    return {batch, session, leader}
  })
  // The answer "was lost": the broker dies, and the producer resends the same bytes to the new process.
  await b.kill()
  await own.restart(b)
  await withWire(b.url, async (wire) => {
    // The restarted broker serves the partition again once the metadata names its leader.
    const [layout] = (await wire.layout(topic))!
    assert.equal(layout.leader, first.leader)
    const send = async (batch: Buffer) => (await produce(await wire.broker(first.leader), topic, [{partition: 0, batch}], -1, 30_000))[0]
    const again = await send(first.batch)
    assert.ok(again.errorCode === 0 || again.errorCode === 46, `the resend is a success or DUPLICATE_SEQUENCE_NUMBER, got error code ${again.errorCode}`)
    const next = await send(encodeRecordBatch(batchOf(5, 10), {...first.session, baseSequence: 5}))
    assert.equal(next.errorCode, 0, 'the session goes on where it was')
    assert.equal(next.baseOffset, '5', 'the resend took no offsets')
    const fetched = await wire.fetch(topic, layout, 0, 1 << 20)
    assert.deepEqual(fetched.records.map((record) => record.value.toString()), batchOf(0, 10).map((record) => record.value))
    t.diagnostic(`Kafka: resend after the restart answered with error code ${again.errorCode} (0: success, 46: duplicate), no record twice`)
  })
})
